#!/bin/sh
# Reduces a fault planted in one node of a fixture model with an external check script (a Vernier
# run of each candidate, fed its reference inputs) and checks that the result holds the faulty
# node and at most 3 nodes.
# usage: reduce_external.sh VERNIER MODEL_DIR FAULTY_NODE MODE
set -eu
vernier=$1 dir=$2 node=$3 mode=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > check.sh <<EOS
#!/bin/sh
exec "$vernier" run vernier_debug.onnx --ref --engine --deterministic --atol 1e-3 --rtol 1e-3 \
  --load-inputs vernier_debug_inputs.json --inject-fault "layer=$node,kind=scale,factor=1.5,missing=ignore"
EOS
"$vernier" debug reduce "$dir/model.onnx" --load-inputs "$dir/input.npz" -o min.onnx --mode "$mode" \
  --no-progress --fail-code 1 --check sh check.sh > log.txt
"$vernier" inspect model min.onnx > inspect.txt
nodes=$(grep -c '^    Node [0-9]' inspect.txt)
if ! grep -qF "| $node [Op:" inspect.txt; then
  echo "FAIL: $mode: $node is not in the result"
  tail -n 5 log.txt
  exit 1
fi
if [ "$nodes" -gt 3 ]; then
  echo "FAIL: $mode kept $nodes nodes"
  exit 1
fi
echo "PASSED: $mode kept $nodes node(s) including $node; $(grep 'Finished' log.txt)"
