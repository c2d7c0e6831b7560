#!/usr/bin/env bash
# Installs what the benchmarks under perf/ drive, if missing: wrk (Debian) for HTTP load.
set -euo pipefail
if command -v wrk >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "wrk is missing: run 'sudo apt-get update && sudo apt-get install -y wrk' first" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
