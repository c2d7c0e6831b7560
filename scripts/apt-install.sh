#!/usr/bin/env bash
# Installs one Debian package if the file or command it provides is missing (as root; otherwise
# says how). Usage: apt-install.sh PACKAGE PROVIDES (a path, or a command name on PATH).
set -euo pipefail
package=$1 provides=$2
if [ -x "$provides" ] || command -v "$provides" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "$package is missing: run 'sudo apt-get update && sudo apt-get install -y $package' first" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
