#!/usr/bin/env bash
# Installs dependencies, builds Vernier from scratch in build/release and runs every test with ctest.
# This is the README's test command and what CI runs; ctest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
jobs=$(nproc)
cmake --preset release > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
rm -f build-configure.log
cmake --build --preset release -j "$jobs"
# ctest lists skipped tests after its summary; the summary line is repeated last so that it is the
# run's final word, and the exit status is ctest's.
set +e
ctest --preset release -j "$jobs" --timeout 900 2>&1 | tee build/release/ctest.log
status=${PIPESTATUS[0]}
grep -E '^[0-9]+% tests passed' build/release/ctest.log | tail -n 1
exit "$status"
