#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the models and data files of the scenario zoo (assets/scenarios/*.json).

Run with Debian's interpreter: /usr/bin/python3 assets/scenarios/make_scenarios.py
Weights and data come from fixed seeds, so the files are reproducible byte for byte. Every model is
small enough that a headless triage of its scenario takes seconds.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="vernier-scenarios")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name + ".onnx")
    onnx.save(model, path)
    print(path)


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def savez(name, **arrays):
    path = os.path.join(HERE, name)
    # np.savez stamps no time into its members, so the archive is reproducible.
    np.savez(path, **{k: v.astype(np.float32) for k, v in arrays.items()})
    print(path)


def input_sensitive(rng):
    """exp(10 x) summed: synthetic inputs in [0, 1) reach e^10 ~ 22000 per element, and the sum of 64
    of them overflows float16 (65504); real inputs stay below 0.4 and every sum fits."""
    inits = [numpy_helper.from_array(np.array([10.0], np.float32), "gain"),
             numpy_helper.from_array(np.array([1], np.int64), "axes")]
    nodes = [
        helper.make_node("Mul", ["x", "gain"], ["scaled"], name="gain"),
        helper.make_node("Exp", ["scaled"], ["energy"], name="exp"),
        helper.make_node("ReduceSum", ["energy", "axes"], ["total"], name="sum", keepdims=1),
        helper.make_node("Log", ["total"], ["log_total"], name="log"),
    ]
    save("input_sensitive", nodes, [tensor("x", [1, 64])], [tensor("log_total", [1, 1])], inits)
    savez("input_sensitive_real.npz", x=rng.uniform(0.0, 0.4, (1, 64)))


def mlp(name, rng, hidden=32):
    """x -> Gemm -> Relu -> Gemm: two fully connected layers, the second one on its own."""
    inits = [
        numpy_helper.from_array((rng.standard_normal((hidden, 16)) * 0.3).astype(np.float32), "fc1.weight"),
        numpy_helper.from_array((rng.standard_normal(hidden) * 0.1).astype(np.float32), "fc1.bias"),
        numpy_helper.from_array((rng.standard_normal((8, hidden)) * 0.3).astype(np.float32), "fc2.weight"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "fc2.bias"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["fc1"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),
        helper.make_node("Gemm", ["relu1", "fc2.weight", "fc2.bias"], ["logits"], name="fc2", transB=1),
    ]
    save(name, nodes, [tensor("x", [4, 16])], [tensor("logits", [4, 8])], inits)


def fp16_overflow(rng):
    """Feature normalization by the L2 norm of a whole feature map: the sum of squares of 16x16x16
    features of magnitude ~10 is ~1e6, far beyond float16's 65504, though every feature and the
    normalized output are small."""
    inits = [
        numpy_helper.from_array((rng.standard_normal((16, 3, 3, 3)) * 4.0).astype(np.float32), "conv.weight"),
        numpy_helper.from_array((rng.standard_normal(16) * 0.1).astype(np.float32), "conv.bias"),
        numpy_helper.from_array(np.array([1, 2, 3], np.int64), "axes"),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv.weight", "conv.bias"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["conv", "conv"], ["squares"], name="square"),
        helper.make_node("ReduceSum", ["squares", "axes"], ["sum_squares"], name="sum_squares", keepdims=1),
        helper.make_node("Sqrt", ["sum_squares"], ["norm"], name="norm"),
        helper.make_node("Div", ["conv", "norm"], ["features"], name="normalize"),
    ]
    save("fp16_overflow", nodes, [tensor("image", [1, 3, 16, 16])], [tensor("features", [1, 16, 16, 16])], inits)


def convnet(name, rng):
    """Conv -> Relu -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm: each convolution fuses
    with its activation in the engine."""
    inits = [
        numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "conv1.weight"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "conv1.bias"),
        numpy_helper.from_array((rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32), "conv2.weight"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "conv2.bias"),
        numpy_helper.from_array((rng.standard_normal((4, 8)) * 0.5).astype(np.float32), "fc.weight"),
        numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "fc.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("Conv", ["relu1", "conv2.weight", "conv2.bias"], ["conv2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["relu2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    save(name, nodes, [tensor("image", [1, 3, 16, 16])], [tensor("logits", [1, 4])], inits)


def cancellation(rng):
    """Two products of nearly equal weights, subtracted: each is accurate to float16's rounding,
    their difference, a few hundredths of either, is not. The difference is asked for in float32
    (--layer-precisions difference:fp32), so no single layer breaks the tolerance on its own."""
    w = rng.uniform(0.5, 1.5, (64, 16))
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["scaled"], name="scale"),
        helper.make_node("MatMul", ["scaled", "w_a"], ["a"], name="product_a"),
        helper.make_node("MatMul", ["scaled", "w_b"], ["b"], name="product_b"),
        helper.make_node("Sub", ["a", "b"], ["delta"], name="difference"),
        helper.make_node("Mul", ["delta", "gain"], ["y"], name="gain"),
    ]
    inits = [
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array((w + 0.02 * rng.standard_normal((64, 16))).astype(np.float32), "w_a"),
        numpy_helper.from_array(w.astype(np.float32), "w_b"),
        numpy_helper.from_array(np.array(10.0, np.float32), "gain"),
    ]
    save("cancellation", nodes, [tensor("x", [1, 64])], [tensor("y", [1, 16])], inits)


def fp16_range(rng):
    """A small classifier whose last layer scales its scores to the units the application wants,
    by a gain of 1e5: the gain itself is beyond float16's largest value (65504), so a float16
    build holds it as 65504 and every score comes out a third too small."""
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["conv1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("GlobalAveragePool", ["relu1"], ["pooled"], name="pool"),
        helper.make_node("Flatten", ["pooled"], ["features"], name="flatten"),
        helper.make_node("Gemm", ["features", "w2", "b2"], ["logits"], name="classifier"),
        helper.make_node("Mul", ["logits", "gain"], ["scores"], name="gain"),
    ]
    inits = [
        numpy_helper.from_array((0.3 * rng.standard_normal((8, 3, 3, 3))).astype(np.float32), "w1"),
        numpy_helper.from_array((0.1 * rng.standard_normal(8)).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.uniform(1.0, 3.0, (8, 4)).astype(np.float32), "w2"),
        numpy_helper.from_array(np.full(4, 2.0, np.float32), "b2"),
        numpy_helper.from_array(np.array(1e5, np.float32), "gain"),
    ]
    save("fp16_range", nodes, [tensor("image", [1, 3, 16, 16])], [tensor("scores", [1, 4])], inits)


def main():
    rng = np.random.RandomState(2026)
    input_sensitive(rng)
    mlp("flaky_tactic", rng)
    fp16_overflow(rng)
    convnet("fused_fault", rng)
    convnet("int8_calibration", rng)
    # Calibration images from a dark scene (values below 0.2) and real images over the whole range:
    # the input's int8 scale clips every real value above 0.2.
    savez("int8_calibration_calib.npz", image=rng.uniform(0.0, 0.2, (1, 3, 16, 16)))
    savez("int8_calibration_real.npz", image=rng.uniform(0.0, 1.0, (1, 3, 16, 16)))
    # Models added later draw from their own generator, so the files above stay as they were.
    cancellation(np.random.RandomState(7))
    fp16_range(np.random.RandomState(8))


if __name__ == "__main__":
    main()
