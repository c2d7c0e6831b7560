#!/usr/bin/env bash
# Installs the readers of the hub's imports (docs/benchhub.md, "Imports and exports") for the tests:
# Inspect AI and lm-evaluation-harness (without torch: the tests' model is a fixed-output class) into
# the project's venv (the `inspect` and `lm-eval` extras), and Every Eval Ever, which needs
# Python >= 3.12 like Harbor, with its Inspect converter and this package into .venv-eee/ (or
# $EEE_VENV). Idempotent: returns at once when the stamps of these versions are there.
set -euo pipefail
cd "$(dirname "$0")/.."
EEE_VERSION=0.3.0
IMPORT_STAMP=.venv/.import-extras
EEE_VENV=${EEE_VENV:-.venv-eee}
EEE_STAMP="$EEE_VENV/.eee-$EEE_VERSION"

if [ ! -f "$IMPORT_STAMP" ] || [ pyproject.toml -nt "$IMPORT_STAMP" ]; then
  .venv/bin/pip install -q -e ".[inspect,lm-eval]"
  touch "$IMPORT_STAMP"
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
