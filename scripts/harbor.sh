#!/usr/bin/env bash
# Installs Harbor (the agent-benchmark harness the bench workflow interoperates with) into its own
# virtualenv, .venv-harbor/ (or $HARBOR_VENV), for the tests. Harbor needs Python >= 3.12, which the
# project itself does not; pyenv's 3.12 is used when python3.12 is not on PATH ($HARBOR_PYTHON wins).
# Idempotent: returns at once when this version is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
HARBOR_VERSION=0.25.0
VENV=${HARBOR_VENV:-.venv-harbor}
STAMP="$VENV/.harbor-$HARBOR_VERSION"
if [ -f "$STAMP" ] && [ -x "$VENV/bin/harbor" ]; then
  exit 0
fi

# shellcheck source=scripts/python312.sh
source scripts/python312.sh
PYTHON=$(python_312 Harbor HARBOR_PYTHON)

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# Harbor's declared dependencies with their pins, then Harbor itself without dependencies, except
# one pin PyPI cannot satisfy: harbor 0.25.0 asks for certifi>=2026.10.19, newer than any certifi
# released, so certifi goes unpinned. (Harbor last, so pip does not report that pin as a conflict.)
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
"$VENV/bin/pip" download -q --no-deps "harbor==$HARBOR_VERSION" -d "$download"
wheel=$(ls "$download"/harbor-*.whl)
"$VENV/bin/python" - "$wheel" >"$VENV/harbor-requirements.txt" <<'PY'
import email
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as archive:
    metadata = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
    requirements = email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist") or []
for requirement in requirements:
    if "extra ==" not in requirement:
        print("certifi" if requirement.startswith("certifi") else requirement)
PY
"$VENV/bin/pip" install -q -r "$VENV/harbor-requirements.txt"
"$VENV/bin/pip" install -q --no-deps "$wheel"
# The host-process environment (bountyboard.runner.hostenv) is imported by Harbor from src/.
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/src" >"$site/bountyboard-src.pth"
"$VENV/bin/harbor" --version >/dev/null
touch "$STAMP"
