#!/usr/bin/env bash
# Installs the TypeScript compiler and newman (both pinned in package.json) into ./node_modules, if
# missing; and Node.js itself from Debian when it is missing and we are root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f package.json ] || { [ -x node_modules/.bin/tsc ] && [ -x node_modules/.bin/newman ]; }; then
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
npm ci --no-audit --no-fund --silent
