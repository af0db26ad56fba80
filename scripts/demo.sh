#!/usr/bin/env bash
# Installs dependencies, builds Vernier in build/release and runs `vernier demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset release > /dev/null
cmake --build --preset release -j "$(nproc)"
exec ./build/release/tui/vernier demo "$@"
