#!/usr/bin/env bash
# Installs what the benchmarks under perf/ drive, if missing: wrk (Debian) for HTTP load, valgrind for
# perf.instructions' counts.
set -euo pipefail
"$(dirname "$0")/apt-install.sh" wrk wrk
"$(dirname "$0")/apt-install.sh" valgrind valgrind
