#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes demo.onnx, the small image classifier that `vernier demo` runs.

Run with Debian's interpreter: /usr/bin/python3 assets/models/make_demo.py
The weights come from a fixed seed, so the file is reproducible byte for byte.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.RandomState(2026)

    def weight(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        weight("conv1.weight", (8, 3, 3, 3), 0.3),
        weight("conv1.bias", (8,), 0.1),
        numpy_helper.from_array(np.abs(rng.standard_normal(8)).astype(np.float32) + 0.5, "bn1.scale"),
        weight("bn1.bias", (8,), 0.1),
        weight("bn1.mean", (8,), 0.1),
        numpy_helper.from_array(np.abs(rng.standard_normal(8)).astype(np.float32) + 0.5, "bn1.var"),
        weight("conv2.weight", (16, 8, 3, 3), 0.15),
        weight("conv2.bias", (16,), 0.1),
        weight("fc.weight", (10, 16), 0.3),
        weight("fc.bias", (10,), 0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["bn1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["bn1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2.weight", "conv2.bias"], ["conv2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["relu2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "vernier_demo",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="vernier-assets")
    model.ir_version = 8
    onnx.checker.check_model(model)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.onnx")
    onnx.save(model, out)
    print(out)


if __name__ == "__main__":
    main()
