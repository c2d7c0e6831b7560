#!/usr/bin/env bash
# Installs what the benchmarks under perf/ drive, if missing: wrk (Debian) for HTTP load.
exec "$(dirname "$0")/apt-install.sh" wrk wrk
