#!/bin/sh
# Headless triage of a fixture model with a fault planted in one node: the walk must end with that
# node named as the culprit and exit code 1.
# usage: triage_model.sh VERNIER MODEL_DIR FAULTY_NODE
set -u
vernier=$1 dir=$2 node=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$vernier" triage "$dir/model.onnx" --headless --workdir "$work/t" --load-inputs "$dir/input.npz" \
  --atol 1e-3 --rtol 1e-3 --deterministic --inject-fault "layer=$node,kind=scale,factor=1.5" > "$work/log.txt" 2>&1
status=$?
grep -E '^\[I\] (Path|Outcome|Triage took)' "$work/log.txt"
if [ "$status" -ne 1 ]; then
  echo "FAIL: exit code $status, expected 1"
  tail -n 5 "$work/log.txt"
  exit 1
fi
if ! grep -qF "culprit: layer '$node'" "$work/log.txt"; then
  echo "FAIL: $node not named"
  exit 1
fi
echo "PASSED"
