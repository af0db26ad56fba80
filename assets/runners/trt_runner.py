#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Vernier's engine runner for TensorRT (protocol version 1), built with Polygraphy's loaders:

    vernier run model.onnx --ref --engine-runner trt --fp16 [--runner-option KEY=VALUE ...]

Needs `tensorrt` (8.6 or later) and `polygraphy` in the python3 on PATH, and a GPU. The load's
build flags are TensorRT's: fp16/bf16/int8 enable those precisions, tf32 false clears TensorRT's
default TF32 flag, layer_precisions with precision_constraints prefer|obey pin layers (by TensorRT
layer name). Every load is a new build, and TensorRT picks tactics by timing them, so two builds
may differ (builds_vary). The engine plan, and the tactic replay when Polygraphy's TacticRecorder
is available, are written into the load's workdir and returned as artifacts. Options:
    profile            NAME:D0xD1x...,... fixed input shapes for dynamic inputs (min = opt = max)
    calibration_cache  an int8 calibration cache to read (int8 without Q/DQ nodes needs one)
    workspace_mib      the builder's workspace limit
bfloat16 inputs and outputs are refused: numpy, through which Polygraphy returns them, lacks them.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vernier_runner  # noqa: E402

import tensorrt as trt  # noqa: E402
from polygraphy.backend.trt import (CreateConfig, EngineBytesFromNetwork, EngineFromBytes,  # noqa: E402
                                    NetworkFromOnnxPath, Profile, TrtRunner)

try:
    from polygraphy.backend.trt import TacticRecorder
except ImportError:  # a Polygraphy or TensorRT without algorithm selectors
    TacticRecorder = None

PRECISIONS = {"fp32": trt.float32, "fp16": trt.float16, "int8": trt.int8}
if hasattr(trt, "bfloat16"):
    PRECISIONS["bf16"] = trt.bfloat16
DTYPES = {trt.float32: "float32", trt.float16: "float16", trt.int8: "int8", trt.int32: "int32", trt.bool: "bool"}
for _name, _numpy in (("int64", "int64"), ("uint8", "uint8"), ("bfloat16", "bfloat16")):
    if hasattr(trt, _name):
        DTYPES[getattr(trt, _name)] = _numpy


class TrtEngine:
    name = "trt"
    version = trt.__version__
    capabilities = {"builds_vary": True, "intermediate_tensors": True, "lowers_precision": True,
                    "per_layer_precision": True, "tactic_replays": TacticRecorder is not None, "artifacts": True}

    def __init__(self):
        self.runner = None

    def load(self, model, workdir, build, options):
        unknown = set(options) - {"profile", "calibration_cache", "workspace_mib"}
        if unknown:
            raise ValueError("unknown option(s) %s (the trt runner takes profile, calibration_cache, workspace_mib)"
                             % ", ".join(sorted(unknown)))
        if self.runner is not None:
            self.runner.deactivate()
            self.runner = None
        builder, network, parser = NetworkFromOnnxPath(model)()
        names = {layer.name for layer in network}
        for layer_name, precision in build.get("layer_precisions", {}).items():
            if layer_name not in names:
                raise ValueError("--layer-precisions names '%s', which is not a TensorRT layer of the network"
                                 % layer_name)
            if precision not in PRECISIONS:
                raise ValueError("layer precision '%s' is not one of %s" % (precision, "|".join(PRECISIONS)))
        for layer in network:
            if layer.name in build.get("layer_precisions", {}):
                layer.precision = PRECISIONS[build["layer_precisions"][layer.name]]
        profiles = None
        if options.get("profile"):
            profile = Profile()
            for item in options["profile"].split(","):
                name, _, dims = item.rpartition(":")
                shape = [int(d) for d in dims.split("x")]
                profile.add(name, min=shape, opt=shape, max=shape)
            profiles = [profile]
        calibrator = None
        if options.get("calibration_cache"):
            from polygraphy.backend.trt import Calibrator
            calibrator = Calibrator(data_loader=[], cache=options["calibration_cache"])
        tactics = os.path.join(workdir, "tactics.json") if TacticRecorder is not None else None
        constraints = build.get("precision_constraints", "none")
        config = CreateConfig(
            tf32=bool(build.get("tf32")), fp16=bool(build.get("fp16")), int8=bool(build.get("int8")),
            bf16=bool(build.get("bf16")) or None, profiles=profiles, calibrator=calibrator,
            precision_constraints=None if constraints == "none" else constraints,
            algorithm_selector=TacticRecorder(record=tactics) if tactics else None,
            memory_pool_limits={trt.MemoryPoolType.WORKSPACE: int(options["workspace_mib"]) << 20}
            if options.get("workspace_mib") else None)
        plan = EngineBytesFromNetwork((builder, network, parser), config=config)()
        plan_path = os.path.join(workdir, "engine.plan")
        with open(plan_path, "wb") as f:
            f.write(plan)
        engine = EngineFromBytes(plan)()
        self.runner = TrtRunner(engine)
        self.runner.activate()
        artifacts = [plan_path] + ([tactics] if tactics and os.path.exists(tactics) else [])
        return {"inputs": self._tensors(engine, trt.TensorIOMode.INPUT),
                "outputs": self._tensors(engine, trt.TensorIOMode.OUTPUT),
                "build": {"layers": self._layers(engine), "artifacts": artifacts}}

    @staticmethod
    def _tensors(engine, mode):
        tensors = []
        for i in range(engine.num_io_tensors):
            name = engine.get_tensor_name(i)
            if engine.get_tensor_mode(name) != mode:
                continue
            dtype = DTYPES.get(engine.get_tensor_dtype(name))
            if dtype is None or dtype == "bfloat16":
                raise ValueError("'%s' is %s, which this runner cannot exchange" % (name, engine.get_tensor_dtype(name)))
            shape = [d if d >= 0 else None for d in engine.get_tensor_shape(name)]
            tensors.append({"name": name, "dtype": dtype, "shape": shape})
        return tensors

    @staticmethod
    def _layers(engine):
        inspector = engine.create_engine_inspector()
        info = json.loads(inspector.get_engine_information(trt.LayerInformationFormat.JSON))
        layers = []
        for layer in info.get("Layers", []):
            if not isinstance(layer, dict):  # without detailed profiling verbosity, names only
                layers.append({"name": str(layer)})
                continue
            outputs = layer.get("Outputs") or [{}]
            layers.append({"name": layer.get("Name", ""), "type": layer.get("LayerType", ""),
                           "precision": str(outputs[0].get("Format/Datatype", "")),
                           "tactic": str(layer.get("TacticName", layer.get("TacticValue", "")))})
        return layers

    def run(self, feeds):
        if any(isinstance(v, vernier_runner.Bits) for v in feeds.values()):
            raise ValueError("bfloat16 inputs cannot be fed through numpy")
        outputs = self.runner.infer(feeds)
        return [(name, outputs[name]) for name in outputs]


if __name__ == "__main__":
    vernier_runner.serve(TrtEngine())
