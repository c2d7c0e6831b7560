#!/usr/bin/env bash
# Installs the Debian packages the test suite drives, if missing: Chromium for Playwright.
exec "$(dirname "$0")/apt-install.sh" chromium /usr/bin/chromium
