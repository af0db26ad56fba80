#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Vernier's engine runner for ONNX Runtime's Python package (protocol version 1):

    vernier run model.onnx --ref --engine-runner ort-python [--runner-option KEY=VALUE ...]

For users who have `onnxruntime` in the python3 on their PATH; `--engine-runner ort` runs the same
engine through Node.js with what scripts/install-deps.sh installs. Options (--runner-option):
    providers         comma-separated execution providers (default: cpu; cpu, cuda, tensorrt or
                      ORT's own names such as CUDAExecutionProvider)
    opt_level         disabled|basic|extended|all graph optimizations (default: all)
    intra_op_threads  threads of one operator (default: the load's build.threads; 0: ORT's choice)
ONNX Runtime runs the model as given: it does not lower precision, and bfloat16 tensors cannot
cross its numpy API.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vernier_runner  # noqa: E402

import onnxruntime as ort  # noqa: E402

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider", "tensorrt": "TensorrtExecutionProvider"}
OPT_LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
# ORT's "tensor(float)" type strings, by numpy's names.
DTYPES = {"float": "float32", "double": "float64", "float16": "float16", "int8": "int8", "uint8": "uint8",
          "int16": "int16", "uint16": "uint16", "int32": "int32", "int64": "int64", "uint32": "uint32",
          "uint64": "uint64", "bool": "bool", "bfloat16": "bfloat16"}


def describe(values):
    described = []
    for v in values:
        kind = v.type[len("tensor("):-1] if v.type.startswith("tensor(") else None
        if kind not in DTYPES:
            raise ValueError("'%s' is %s, which .npy exchange cannot carry" % (v.name, v.type))
        shape = None if v.shape is None else [d if isinstance(d, int) and d >= 0 else (d or None) for d in v.shape]
        described.append({"name": v.name, "dtype": DTYPES[kind], "shape": shape})
    return described


class OrtEngine:
    name = "ort-python"
    version = ort.__version__
    capabilities = {"intermediate_tensors": True, "builds_vary": False, "lowers_precision": False}

    def __init__(self):
        self.session = None

    def load(self, model, workdir, build, options):
        for flag in ("fp16", "bf16", "tf32", "int8"):
            if build.get(flag):
                raise ValueError("ONNX Runtime runs the model as given and cannot build it in %s" % flag)
        if build.get("layer_precisions"):
            raise ValueError("ONNX Runtime cannot set layer precisions")
        unknown = set(options) - {"providers", "opt_level", "intra_op_threads"}
        if unknown:
            raise ValueError("unknown option(s) %s (the ort-python runner takes providers, opt_level, "
                             "intra_op_threads)" % ", ".join(sorted(unknown)))
        level = options.get("opt_level", "all")
        if level not in OPT_LEVELS:
            raise ValueError("opt_level '%s' is not one of %s" % (level, "|".join(OPT_LEVELS)))
        so = ort.SessionOptions()
        so.graph_optimization_level = OPT_LEVELS[level]
        threads = int(options.get("intra_op_threads", build.get("threads") or 0))
        if threads > 0:
            so.intra_op_num_threads = threads
        providers = [PROVIDERS.get(p.strip().lower(), p.strip())
                     for p in options.get("providers", "cpu").split(",") if p.strip()]
        self.session = None
        self.session = ort.InferenceSession(model, so, providers=providers)
        inputs = describe(self.session.get_inputs())
        outputs = describe(self.session.get_outputs())
        for t in inputs + outputs:
            if t["dtype"] == "bfloat16":
                raise ValueError("'%s' is bfloat16, which ONNX Runtime's numpy API cannot carry" % t["name"])
        # ORT does not expose the graph it fused and placed: no layers to report.
        return {"inputs": inputs, "outputs": outputs, "build": {"layers": [], "artifacts": []}}

    def run(self, feeds):
        names = [o.name for o in self.session.get_outputs()]
        return list(zip(names, self.session.run(names, feeds)))


if __name__ == "__main__":
    vernier_runner.serve(OrtEngine())
