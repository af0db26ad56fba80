#!/usr/bin/env bash
# Installs dependencies, builds what the demo needs (the vernier program, not the tests) in
# build/release and runs `vernier demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset release > /dev/null
cores="$(nproc)"
# The compile steps still to run, at about 6 CPU-seconds each (the whole build, 331 steps, took
# 17 minutes on 2 cores): an estimate, shorter when ccache has the objects.
steps="$(ninja -C build/release -n vernier | grep -c '^\[' || true)"
if [ "$steps" -gt 0 ]; then
  echo "First build: about $(( (steps * 6 + cores * 60 - 1) / (cores * 60) )) minute(s) on this machine's ${cores} core(s) (${steps} compile steps)"
fi
start="$(date +%s)"
cmake --build --preset release -j "$cores" --target vernier
[ "$steps" -gt 0 ] && echo "Built in $(( $(date +%s) - start )) s"
exec ./build/release/tui/vernier demo "$@"
