#!/usr/bin/env bash
# The long fuzz run of issue 9: builds the libFuzzer targets with clang (ASan + UBSan) in
# build/fuzz and runs each for SECONDS (default 600) over a working copy of its seed corpus.
# New inputs stay in build/fuzz/corpus_long/<target>/; crashes are written to build/fuzz/findings/.
# Every finding gets a regression case in tests/hostile/gen_hostile.py or a unit test.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_onnx_model fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_polygraphy_json fuzz_plan fuzz_tactic_replay
           fuzz_debug_replay fuzz_calibration_cache fuzz_timing_cache)
fi
if [ ! -f build/fuzz/CMakeCache.txt ]; then
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DVN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVN_BUILD_TESTS=OFF -DVN_BUILD_BENCHMARKS=OFF
fi
cmake --build build/fuzz --target "${targets[@]}"
mkdir -p build/fuzz/findings
for t in "${targets[@]}"; do
  corpus=build/fuzz/corpus_long/$t
  mkdir -p "$corpus"
  cp -Rn "tests/fuzz/corpus/$t/." "$corpus/"
  echo "== $t: ${seconds} s"
  ASAN_OPTIONS=detect_leaks=1 "build/fuzz/tests/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="build/fuzz/findings/$t-" "$corpus"
done
