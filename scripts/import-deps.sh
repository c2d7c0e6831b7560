#!/usr/bin/env bash
# Installs the readers of the hub's imports (docs/benchhub.md, "Imports and exports") for the tests:
# Inspect AI into the project's venv (the `inspect` extra), and Every Eval Ever, which needs
# Python >= 3.12 like Harbor, with its Inspect converter and this package into .venv-eee/ (or
# $EEE_VENV). Idempotent: returns at once when the stamps of these versions are there.
set -euo pipefail
cd "$(dirname "$0")/.."
EEE_VERSION=0.3.0
INSPECT_STAMP=.venv/.inspect-extra
EEE_VENV=${EEE_VENV:-.venv-eee}
EEE_STAMP="$EEE_VENV/.eee-$EEE_VERSION"

if [ ! -f "$INSPECT_STAMP" ] || [ pyproject.toml -nt "$INSPECT_STAMP" ]; then
  .venv/bin/pip install -q -e ".[inspect]"
  touch "$INSPECT_STAMP"
fi

if [ -f "$EEE_STAMP" ] && [ -x "$EEE_VENV/bin/python" ] && [ ! pyproject.toml -nt "$EEE_STAMP" ]; then
  exit 0
fi
# shellcheck source=scripts/python312.sh
source scripts/python312.sh
PYTHON=$(python_312 "Every Eval Ever" EEE_PYTHON)
rm -rf "$EEE_VENV"
"$PYTHON" -m venv "$EEE_VENV"
"$EEE_VENV/bin/pip" install -q --upgrade pip
"$EEE_VENV/bin/pip" install -q -e ".[eee,inspect]"
touch "$EEE_STAMP"
