#!/usr/bin/env bash
# Installs the Node packages of the repository (the TypeScript client package under
# clients/typescript, its TypeScript compilers and generator, newman and pyright) into ./node_modules with `npm ci`,
# exactly as package-lock.json says; and Node.js itself from Debian when it is missing and we are
# root. Quick when nothing changed: a stamp records the lock file that was installed.
set -euo pipefail
cd "$(dirname "$0")/.."
STAMP=node_modules/.installed-from-lock
wanted="$(cat package.json clients/typescript/package.json package-lock.json | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$wanted" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" != "0" ]; then
    echo "npm is missing: run 'sudo apt-get update && sudo apt-get install -y nodejs npm' first" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
# The client package declares Node 20+ (engines), which npm ci only warns about: say it plainly here.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "Node.js 20 or newer is needed (found $(node --version)): install it, then run this again" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$wanted" > "$STAMP"
