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
find_python() {
  local candidate
  for candidate in "${EEE_PYTHON:-}" python3.12 python3.13 \
      "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.13*/bin/python3; do
    [ -n "$candidate" ] || continue
    if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
PYTHON=$(find_python) || {
  echo "Every Eval Ever needs Python >= 3.12: install it (pyenv install 3.12) or set EEE_PYTHON" >&2
  exit 1
}
rm -rf "$EEE_VENV"
"$PYTHON" -m venv "$EEE_VENV"
"$EEE_VENV/bin/pip" install -q --upgrade pip
"$EEE_VENV/bin/pip" install -q -e ".[eee,inspect]"
touch "$EEE_STAMP"
