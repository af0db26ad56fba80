#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Vernier's external-engine runner for ONNX Runtime.

    vernier run model.onnx --ref \
        --external 'python3 assets/runners/onnxrt_runner.py {model} {inputs} {outputs} {mark}'

Reads the feed Vernier wrote ({inputs}: a Polygraphy feed-list JSON), runs the model on ONNX
Runtime with every tensor named in {mark} (one per line) made a graph output, and writes the
results to {outputs} as Polygraphy RunResults JSON. Tensors ONNX Runtime cannot return are left
out and Vernier lists them as not produced. Environment:
    VERNIER_ORT_PROVIDERS   comma-separated execution providers (default: CPUExecutionProvider)
    VERNIER_ORT_OPT_LEVEL   disable|basic|extended|all graph optimizations (default: all; marking
                            tensors keeps them from being fused away)
"""
import base64
import io
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort


def decode_array(obj):
    if isinstance(obj, dict) and obj.get("polygraphy_class") == "LazyArray":
        obj = obj["values"]
    if not isinstance(obj, dict) or obj.get("polygraphy_class") != "ndarray":
        raise ValueError("expected a Polygraphy ndarray object")
    return np.load(io.BytesIO(base64.b64decode(obj["array"])), allow_pickle=False)


def encode_array(array):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), "polygraphy_class": "ndarray"}


def mark_outputs(model, names):
    """Makes `names` graph outputs (in that order), typed where shape inference knows the type."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    except Exception:  # a model shape inference rejects still runs; outputs just stay untyped
        known = {}
    for v in model.graph.input:
        known.setdefault(v.name, v)
    existing = {o.name for o in model.graph.output}
    for name in names:
        if name in existing:
            continue
        info = onnx.ValueInfoProto()
        if name in known:
            info.CopyFrom(known[name])
        else:
            info.name = name
        model.graph.output.append(info)
        existing.add(name)


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: onnxrt_runner.py MODEL INPUTS OUTPUTS [MARK]\n")
        return 2
    model_path, inputs_path, outputs_path = argv[1:4]
    names = []
    if len(argv) == 5 and os.path.exists(argv[4]):
        with open(argv[4], encoding="utf-8") as f:
            names = [line.rstrip("\n") for line in f if line.rstrip("\n")]

    with open(inputs_path, encoding="utf-8") as f:
        feeds = json.load(f)
    if not isinstance(feeds, list) or not feeds:
        raise ValueError(f"{inputs_path}: expected a non-empty list of feed dicts")
    feed = {name: decode_array(value) for name, value in feeds[0].items()}

    model = onnx.load(model_path)
    mark_outputs(model, names)
    options = ort.SessionOptions()
    level = os.environ.get("VERNIER_ORT_OPT_LEVEL", "all")
    options.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    providers = os.environ.get("VERNIER_ORT_PROVIDERS", "CPUExecutionProvider").split(",")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)

    graph_inputs = {i.name for i in session.get_inputs()}
    wanted = [o.name for o in session.get_outputs()]
    start = time.perf_counter()
    values = session.run(wanted, {k: v for k, v in feed.items() if k in graph_inputs})
    runtime = time.perf_counter() - start

    runner = "onnxrt-runner-N0-" + time.strftime("%m/%d/%y-%H:%M:%S")
    outputs = {name: encode_array(value) for name, value in zip(wanted, values) if isinstance(value, np.ndarray)}
    results = {
        "lst": [[runner, [{"outputs": outputs, "runtime": runtime, "runner_name": runner,
                           "polygraphy_class": "IterationResult"}]]],
        "polygraphy_class": "RunResults",
    }
    tmp = outputs_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f)
    os.replace(tmp, outputs_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
