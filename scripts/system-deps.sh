#!/usr/bin/env bash
# Installs the Debian packages the test suite drives, if missing: Chromium for Playwright, and
# bubblewrap, the sandbox that task checks run untrusted code in (docs/checks.md).
set -euo pipefail
here="$(dirname "$0")"
"$here/apt-install.sh" chromium /usr/bin/chromium
"$here/apt-install.sh" bubblewrap bwrap
