#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Vernier's external-engine runner for TensorRT through Polygraphy (for machines that have both):
#
#   vernier run model.onnx --ref \
#       --external 'bash assets/runners/polygraphy_runner.sh {model} {inputs} {outputs} {mark}'
#
# Runs `polygraphy run MODEL --trt` on the feed Vernier wrote, marks the tensors listed in MARK
# (one per line; graph outputs first, so the list replaces the network outputs as --trt-outputs
# does) and saves Polygraphy RunResults JSON where Vernier reads it. Build flags go in
# VERNIER_POLYGRAPHY_ARGS, e.g. VERNIER_POLYGRAPHY_ARGS="--fp16 --builder-optimization-level 5";
# POLYGRAPHY names the executable (default: polygraphy on PATH).
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: polygraphy_runner.sh MODEL INPUTS OUTPUTS [MARK]" >&2
  exit 2
fi
model=$1 inputs=$2 outputs=$3 mark=${4:-}

cmd=("${POLYGRAPHY:-polygraphy}" run "$model" --trt --load-inputs "$inputs" --save-outputs "$outputs")
if [[ -n "$mark" && -s "$mark" ]]; then
  mapfile -t names < "$mark"
  cmd+=(--trt-outputs "${names[@]}")
fi
if [[ -n "${VERNIER_POLYGRAPHY_ARGS:-}" ]]; then
  read -r -a extra <<< "$VERNIER_POLYGRAPHY_ARGS"
  cmd+=("${extra[@]}")
fi
exec "${cmd[@]}"
