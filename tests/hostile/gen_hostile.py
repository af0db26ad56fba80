#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the hostile-input battery (issue 9): malformed files of every format Vernier reads, and a
manifest of the command that must refuse each one.

Usage: gen_hostile.py VERNIER DEMO_MODEL OUT_DIR

Everything is derived deterministically from the demo model, from files numpy/onnx write and from
files `vernier` itself writes (plans, tactic replays, calibration and timing caches), so no binary is
committed.
OUT_DIR/manifest.json lists the cases: {"name", "format", "args", "expect"}; in "args", "{file}" is
the case's file and "{model}" the demo model. "expect" is the exit code: 2 (refused with one error
line) for every malformed file, 0 for the few edge cases the ONNX spec allows (empty tensors).
"""

import base64
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import warnings
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VERNIER, DEMO, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
RNG = random.Random(9)
warnings.simplefilter("ignore")  # zipfile warns about the duplicate member written on purpose
CASES = []
shutil.rmtree(OUT, ignore_errors=True)


def add(fmt, name, data, args, expect=2, ext=None):
    """Writes `data` (bytes, str or None for no file) as OUT/<fmt>/<name><ext> and records the case."""
    folder = os.path.join(OUT, fmt)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + (ext or ""))
    if data is not None:
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        with open(path, "wb") as f:
            f.write(data)
    CASES.append({"name": f"{fmt}/{name}", "format": fmt, "file": path, "args": args, "expect": expect})


def truncations(data, count):
    """`count` distinct cut points spread over the file, first and last byte included."""
    n = len(data)
    points = sorted({0, 1, n - 1} | {max(1, (n * k) // (count + 1)) for k in range(1, count + 1)})
    return [p for p in points if 0 <= p < n]


# --- ONNX models -----------------------------------------------------------------------------------

INSPECT_MODEL = ["inspect", "model", "{file}"]
RUN_REF = ["run", "{file}", "--ref"]


def model_bytes(nodes, inputs, outputs, inits=(), opset=13, ir=8, domains=()):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = ir
    return model.SerializeToString()


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def parses_as_model(data):
    try:
        m = onnx.ModelProto()
        m.ParseFromString(data)
        return m.HasField("graph")
    except Exception:
        return False


demo = open(DEMO, "rb").read()
add("onnx", "empty", b"", INSPECT_MODEL, ext=".onnx")
add("onnx", "text", "this is not a model\n", INSPECT_MODEL, ext=".onnx")
add("onnx", "nul_bytes", b"\0" * 64, INSPECT_MODEL, ext=".onnx")
add("onnx", "missing", None, INSPECT_MODEL, ext=".onnx")
add("onnx", "folder", None, INSPECT_MODEL)
os.makedirs(os.path.join(OUT, "onnx", "folder"), exist_ok=True)
for cut in truncations(demo, 24):
    if not parses_as_model(demo[:cut]):
        add("onnx", f"truncated_{cut}", demo[:cut], INSPECT_MODEL, ext=".onnx")
flips = 0
for i in range(400):
    pos = RNG.randrange(len(demo))
    bad = bytearray(demo)
    bad[pos] ^= 1 << RNG.randrange(8)
    if not parses_as_model(bytes(bad)) and flips < 16:
        flips += 1
        add("onnx", f"bitflip_{pos}", bytes(bad), INSPECT_MODEL, ext=".onnx")

X = vi("x", [2, 3])
Y = vi("y", [2, 3])
relu = lambda i, o, name: helper.make_node("Relu", [i], [o], name=name)
graphs = {
    "cycle": ([relu("b", "a", "n_a"), relu("a", "b", "n_b"), helper.make_node("Add", ["x", "a"], ["y"], name="n_y")], [X], [Y]),
    "self_loop": ([helper.make_node("Add", ["x", "y"], ["y"], name="n_self")], [X], [Y]),
    "dangling_input": ([helper.make_node("Add", ["x", "ghost"], ["y"], name="n_dangling")], [X], [Y]),
    "duplicate_output": ([relu("x", "y", "n1"), relu("x", "y", "n2")], [X], [Y]),
    "output_is_input": ([relu("x", "x", "n_overwrites_input"), relu("x", "y", "n2")], [X], [Y]),
    "duplicate_graph_input": ([relu("x", "y", "n1")], [X, vi("x", [2, 3])], [Y]),
    "undefined_graph_output": ([relu("x", "t", "n1")], [X], [Y]),
    "empty_op_type": ([helper.make_node("", ["x"], ["y"], name="n_empty")], [X], [Y]),
    "unknown_op": ([helper.make_node("FrobnicateTensor", ["x"], ["y"], name="n_unknown")], [X], [Y]),
    "too_many_inputs": ([helper.make_node("Relu", ["x", "x"], ["y"], name="n_arity")], [X], [Y]),
    "too_few_inputs": ([helper.make_node("Conv", ["x"], ["y"], name="n_conv")], [X], [Y]),
    "too_many_outputs": ([helper.make_node("Relu", ["x"], ["y", "z"], name="n_outs")], [X], [Y]),
    "attr_float_for_int": ([helper.make_node("Softmax", ["x"], ["y"], name="n_sm", axis=1.5)], [X], [Y]),
    "attr_string_for_int": ([helper.make_node("Softmax", ["x"], ["y"], name="n_sm", axis="one")], [X], [Y]),
    "attr_ints_for_int": ([helper.make_node("Softmax", ["x"], ["y"], name="n_sm", axis=[1, 2])], [X], [Y]),
    "attr_unknown": ([helper.make_node("Relu", ["x"], ["y"], name="n_relu", bogus=3)], [X], [Y]),
    "attr_out_of_range": ([helper.make_node("Softmax", ["x"], ["y"], name="n_sm", axis=7)], [X], [Y]),
    "wrong_input_dtype": ([helper.make_node("Add", ["x", "i"], ["y"], name="n_add")], [X, vi("i", [2, 3], TensorProto.INT32)], [Y]),
    "string_input_to_relu": ([relu("s", "y", "n_relu")], [vi("s", [2, 3], TensorProto.STRING)], [Y]),
    "shape_mismatch": ([helper.make_node("Add", ["x", "w"], ["y"], name="n_add")], [X, vi("w", [4, 5])], [Y]),
}
# Past opset 17 (which libonnx 1.12's checker knows) Vernier checks counts and attribute names
# against ONNX 1.23's schemas itself.
for name, (nodes, ins, outs) in graphs.items():
    for opset in (13, 18, 23):
        add("onnx", f"{name}_opset{opset}", model_bytes(nodes, ins, outs, opset=opset), RUN_REF, ext=".onnx")

unknown_domain = [helper.make_node("Frob", ["x"], ["y"], name="n_frob", domain="com.example.hostile")]
add("onnx", "unknown_domain_imported", model_bytes(unknown_domain, [X], [Y], domains=["com.example.hostile"]), RUN_REF, ext=".onnx")
add("onnx", "unknown_domain_not_imported", model_bytes(unknown_domain, [X], [Y]), RUN_REF, ext=".onnx")
ok_relu = [relu("x", "y", "n_relu")]
add("onnx", "ir_version_0", model_bytes(ok_relu, [X], [Y], ir=0), INSPECT_MODEL, ext=".onnx")
add("onnx", "opset_0", model_bytes(ok_relu, [X], [Y], opset=0), RUN_REF, ext=".onnx")
add("onnx", "opset_negative", model_bytes(ok_relu, [X], [Y], opset=-3), RUN_REF, ext=".onnx")
no_opset = onnx.ModelProto()
no_opset.ParseFromString(model_bytes(ok_relu, [X], [Y]))
del no_opset.opset_import[:]
add("onnx", "no_opset_import", no_opset.SerializeToString(), RUN_REF, ext=".onnx")
# Newer than what Vernier reads (README, "Which ONNX Vernier reads"): an IR version or opset past
# ONNX 1.23's, a field libonnx 1.12's protobuf does not know (ModelProto field 99, varint 1), a
# node calling a model-local function overload (NodeProto field 8).
add("onnx", "ir_version_15", model_bytes(ok_relu, [X], [Y], ir=15), RUN_REF, ext=".onnx")
add("onnx", "opset_29", model_bytes(ok_relu, [X], [Y], opset=29), RUN_REF, ext=".onnx")
add("onnx", "unknown_field", model_bytes(ok_relu, [X], [Y]) + bytes([0x98, 0x06, 0x01]), RUN_REF, ext=".onnx")
overload = onnx.ModelProto()
overload.ParseFromString(model_bytes(ok_relu, [X], [Y], ir=10))
node_bytes = overload.graph.node[0].SerializeToString() + bytes([0x42, 0x04]) + b"fast"
del overload.graph.node[:]
overload.graph.node.add().ParseFromString(node_bytes)
add("onnx", "node_overload", overload.SerializeToString(), RUN_REF, ext=".onnx")
no_graph = onnx.ModelProto(ir_version=8)
add("onnx", "no_graph", no_graph.SerializeToString(), INSPECT_MODEL, ext=".onnx")

# Declared sizes: nothing may be allocated for them.
for name, shape in {"input_1e12": [1000000, 1000000], "input_overflow": [1 << 62, 1 << 62]}.items():
    for opset in (13, 18):
        add("onnx", f"{name}_opset{opset}", model_bytes(ok_relu, [vi("x", shape)], [vi("y", shape)], opset=opset), RUN_REF, ext=".onnx")


def init_model(tensor, opset=13):
    nodes = [helper.make_node("Add", ["x", tensor.name], ["y"], name="n_add")]
    return model_bytes(nodes, [X], [Y], inits=[tensor], opset=opset)


def raw_tensor(name, dims, raw, dtype=TensorProto.FLOAT):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    t.raw_data = raw
    return t


for opset in (13, 18):
    add("onnx", f"init_short_raw_opset{opset}", init_model(raw_tensor("w", [2, 3], b"\0" * 20), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_long_raw_opset{opset}", init_model(raw_tensor("w", [2, 3], b"\0" * 28), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_1e12_opset{opset}", init_model(raw_tensor("w", [1000000, 1000000], b""), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_negative_dim_opset{opset}", init_model(raw_tensor("w", [-2, 3], b""), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_dtype_0_opset{opset}", init_model(raw_tensor("w", [2, 3], b"\0" * 24, 0), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_dtype_999_opset{opset}", init_model(raw_tensor("w", [2, 3], b"\0" * 24, 999), opset), RUN_REF, ext=".onnx")
    add("onnx", f"init_complex_opset{opset}", init_model(raw_tensor("w", [2, 3], b"\0" * 48, TensorProto.COMPLEX64), opset), RUN_REF, ext=".onnx")
    fd = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0] * 5)
    add("onnx", f"init_float_data_count_opset{opset}", init_model(fd, opset), RUN_REF, ext=".onnx")
    # The narrow element types, packed in raw_data (int4/uint4/float4 two per byte, int2/uint2 four):
    # an odd count of 5 elements one byte short and one byte over what the shape needs.
    for dtype, name, per_byte in ((17, "float8e4m3fn", 1), (18, "float8e4m3fnuz", 1), (19, "float8e5m2", 1),
                                  (20, "float8e5m2fnuz", 1), (24, "float8e8m0", 1), (21, "uint4", 2), (22, "int4", 2),
                                  (23, "float4e2m1", 2), (25, "uint2", 4), (26, "int2", 4)):
        need = (5 + per_byte - 1) // per_byte
        for label, size in (("truncated", need - 1), ("overlong", need + 1)):
            add("onnx", f"init_{name}_{label}_opset{opset}",
                init_model(raw_tensor("w", [5], b"\x11" * size, dtype), opset), RUN_REF, ext=".onnx")
    seg = raw_tensor("w", [2, 3], b"\0" * 24)
    seg.segment.begin, seg.segment.end = 0, 3
    add("onnx", f"init_segment_opset{opset}", init_model(seg, opset), RUN_REF, ext=".onnx")


def external(location, offset=None, length=None, dims=(2, 3)):
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=list(dims))
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


ext_dir = os.path.join(OUT, "onnx_external")
os.makedirs(ext_dir, exist_ok=True)
with open(os.path.join(ext_dir, "weights.bin"), "wb") as f:
    f.write(b"\0" * 24)
external_cases = {
    "escapes_folder": external("../../../../etc/passwd"),
    "escapes_after_descending": external("sub/../../weights.bin"),
    "absolute": external("/etc/passwd"),
    "empty_location": external(""),
    "nul_in_location": external("weights.bin\0.txt"),
    "missing_file": external("no_such_weights.bin"),
    "folder": external("."),
    "offset_past_end": external("weights.bin", offset=4096),
    "length_too_short": external("weights.bin", length=12),
    "length_past_end": external("weights.bin", length=1 << 40),
    "negative_offset": external("weights.bin", offset=-8),
    "offset_not_a_number": external("weights.bin", offset="twelve"),
    "huge_shape": external("weights.bin", dims=(1000000, 1000000)),
}
for name, tensor in external_cases.items():
    for opset in (13, 18):
        add("onnx_external", f"{name}_opset{opset}", init_model(tensor, opset), RUN_REF, ext=".onnx")


# Nested subgraphs: If inside If; past protobuf's recursion limit, and within it with a dangling
# name in the innermost branch.
def nested_if(depth, inner_input):
    # Only then-branches nest: nesting both would double the file at every level.
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["b"], name="leaf")], "leaf", [], [vi("b", [2, 3])])
    body = helper.make_graph([helper.make_node("Identity", [inner_input], ["b"], name="inner")], "inner", [], [vi("b", [2, 3])])
    for level in range(depth):
        node = helper.make_node("If", ["cond"], ["b"], name=f"if_{level}", then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], f"level{level}", [], [vi("b", [2, 3])])
    cond = vi("cond", [], TensorProto.BOOL)
    top = helper.make_node("If", ["cond"], ["y"], name="if_top", then_branch=body, else_branch=leaf)
    graph = helper.make_graph([top], "nested", [cond, X], [Y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


add("onnx", "nested_if_200", nested_if(200, "x"), RUN_REF, ext=".onnx")
add("onnx", "nested_if_1000", nested_if(1000, "x"), RUN_REF, ext=".onnx")
add("onnx", "nested_if_10_dangling", nested_if(10, "ghost"), RUN_REF, ext=".onnx")
# Found by fuzz_onnx_model: a Conv weight whose rank differs from the input's crashed libonnx 1.12's
# shape inference. Variants: the demo's conv1 reading its bias as weight, a scalar weight, a
# ConvTranspose, and a Conv inside an If branch fed by an intermediate tensor.
conv_bias = onnx.load(DEMO)
conv_bias.graph.node[0].input[1] = "conv1.bias"
add("onnx", "conv_weight_rank_1", conv_bias.SerializeToString(), INSPECT_MODEL, ext=".onnx")
X4 = vi("x", [1, 2, 5, 5])
Y4 = vi("y", None)
scalar_w = numpy_helper.from_array(np.array(1.0, np.float32), "w")
add("onnx", "conv_weight_scalar", model_bytes([helper.make_node("Conv", ["x", "w"], ["y"], name="n_conv")], [X4], [Y4], inits=[scalar_w]), INSPECT_MODEL, ext=".onnx")
w5 = numpy_helper.from_array(np.ones((2, 2, 1, 1, 1), np.float32), "w")
add("onnx", "conv_transpose_weight_rank_5", model_bytes([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="n_convt")], [X4], [Y4], inits=[w5]), INSPECT_MODEL, ext=".onnx")
w1 = numpy_helper.from_array(np.ones((2,), np.float32), "w")
branch = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="n_relu"), helper.make_node("Conv", ["r", "w"], ["b"], name="n_inner_conv")],
                           "branch", [], [vi("b", None)])
if_node = helper.make_node("If", ["cond"], ["y"], name="n_if", then_branch=branch, else_branch=branch)
add("onnx", "conv_weight_rank_in_subgraph", model_bytes([if_node], [vi("cond", [], TensorProto.BOOL), X4], [Y4], inits=[w1]), INSPECT_MODEL, ext=".onnx")
pool_stride_0 = onnx.load(DEMO)
for attr in pool_stride_0.graph.node[3].attribute:
    if attr.name == "strides":
        attr.ints[0] = 0
add("onnx", "maxpool_stride_0", pool_stride_0.SerializeToString(), INSPECT_MODEL, ext=".onnx")
pads_short = onnx.load(DEMO)
pads_short.graph.node[0].attribute[0].ints[:] = [1, 1]
add("onnx", "conv_pads_two_values", pads_short.SerializeToString(), INSPECT_MODEL, ext=".onnx")
add("onnx", "maxpool_kernel_shape_three_values",
    model_bytes([helper.make_node("MaxPool", ["x"], ["y"], name="n_pool", kernel_shape=[2, 2, 2])], [X4], [Y4]), INSPECT_MODEL, ext=".onnx")
add("onnx", "depth_to_space_blocksize_0",
    model_bytes([helper.make_node("DepthToSpace", ["x"], ["y"], name="n_d2s", blocksize=0)], [X4], [Y4]), INSPECT_MODEL, ext=".onnx")
add("onnx", "conv_dilation_negative",
    model_bytes([helper.make_node("Conv", ["x", "w"], ["y"], name="n_conv", dilations=[-1, 1])], [X4], [Y4],
                inits=[numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), "w")]), INSPECT_MODEL, ext=".onnx")
long_name = "n" * 100000
add("onnx", "long_node_name_cycle", model_bytes([relu("b", "a", long_name), relu("a", "b", "n_b"), helper.make_node("Add", ["x", "a"], ["y"], name="n_y")], [X], [Y]), RUN_REF, ext=".onnx")
add("onnx", "nul_in_node_name", model_bytes([helper.make_node("Add", ["x", "ghost"], ["y"], name="bad\0name")], [X], [Y]), RUN_REF, ext=".onnx")

# A negative dim_value is read as a dynamic dimension, as exporters write -1 for one (exit 0).
add("onnx", "input_negative_dim_is_dynamic", model_bytes(ok_relu, [vi("x", [-4, 3])], [vi("y", [-4, 3])]), RUN_REF, expect=0, ext=".onnx")

# Empty tensors and zero-size dimensions are valid ONNX: the results must be correct (exit 0).
EMPTY = [0, 3]
add("onnx", "valid_relu_empty", model_bytes(ok_relu, [vi("x", EMPTY)], [vi("y", EMPTY)]), RUN_REF, expect=0, ext=".onnx")
add("onnx", "valid_reduce_sum_empty",
    model_bytes([helper.make_node("ReduceSum", ["x"], ["y"], name="n_sum", keepdims=1)], [vi("x", EMPTY)], [vi("y", [1, 1])]),
    RUN_REF, expect=0, ext=".onnx")
add("onnx", "valid_concat_empty",
    model_bytes([helper.make_node("Concat", ["x", "e"], ["y"], name="n_cat", axis=0)], [X, vi("e", EMPTY)], [Y]),
    RUN_REF, expect=0, ext=".onnx")
add("onnx", "valid_matmul_inner_zero",
    model_bytes([helper.make_node("MatMul", ["a", "b"], ["y"], name="n_mm")], [vi("a", [2, 0]), vi("b", [0, 3])], [Y]),
    RUN_REF, expect=0, ext=".onnx")
add("onnx", "valid_empty_initializer",
    model_bytes([helper.make_node("Concat", ["x", "e"], ["y"], name="n_cat", axis=0)], [X], [Y],
                inits=[numpy_helper.from_array(np.zeros((0, 3), np.float32), "e")]),
    RUN_REF, expect=0, ext=".onnx")

# --- npy -----------------------------------------------------------------------------------------

INSPECT_DATA = ["inspect", "data", "{file}"]


def npy(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def npy_header(header, data=b"", version=(1, 0)):
    body = header.encode("latin-1")
    pad = 64 - (10 + len(body) + 1) % 64
    body += b" " * (pad % 64) + b"\n"
    size = struct.pack("<H", len(body)) if version[0] == 1 else struct.pack("<I", len(body))
    return b"\x93NUMPY" + bytes(version) + size + body + data


good_npy = npy(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
add("npy", "empty", b"", INSPECT_DATA, ext=".npy")
add("npy", "missing", None, INSPECT_DATA, ext=".npy")
for cut in truncations(good_npy, 16):
    add("npy", f"truncated_{cut}", good_npy[:cut], INSPECT_DATA, ext=".npy")
add("npy", "extra_data", good_npy + b"\0" * 4, INSPECT_DATA, ext=".npy")
add("npy", "bad_magic", b"\x93NUMPX" + good_npy[6:], INSPECT_DATA, ext=".npy")
add("npy", "version_9", good_npy[:6] + b"\x09\x00" + good_npy[8:], INSPECT_DATA, ext=".npy")
add("npy", "header_len_past_end", good_npy[:8] + b"\xff\xff" + good_npy[10:], INSPECT_DATA, ext=".npy")
add("npy", "v2_header_len_4g", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}", INSPECT_DATA, ext=".npy")
add("npy", "header_len_zero", good_npy[:8] + b"\x00\x00" + good_npy[10:], INSPECT_DATA, ext=".npy")
headers = {
    "not_a_dict": "[1, 2, 3]",
    "unterminated_dict": "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), ",
    "no_descr": "{'fortran_order': False, 'shape': (2, 3, 4), }",
    "no_shape": "{'descr': '<f4', 'fortran_order': False, }",
    "no_fortran_order": "{'descr': '<f4', 'shape': (2, 3, 4), }",
    "descr_unknown": "{'descr': '<q9', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_complex": "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_object": "{'descr': '|O', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_big_endian": "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_unicode": "{'descr': '<U5', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_structured": "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3, 4), }",
    "descr_not_string": "{'descr': 4, 'fortran_order': False, 'shape': (2, 3, 4), }",
    "fortran_not_bool": "{'descr': '<f4', 'fortran_order': 'maybe', 'shape': (2, 3, 4), }",
    "shape_negative": "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3, 4), }",
    "shape_1e12": "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
    "shape_overflow": "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
    "shape_huge_int": "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999, ), }",
    "shape_float": "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 3, 4), }",
    "shape_nested": "{'descr': '<f4', 'fortran_order': False, 'shape': ((2,), 3, 4), }",
    "shape_string": "{'descr': '<f4', 'fortran_order': False, 'shape': '2,3,4', }",
    "shape_deep_nesting": "{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 10000 + ")" * 10000 + ", }",
    "value_deep_nesting": "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), 'x': " + "[" * 10000 + "]" * 10000 + "}",
    "duplicate_key": "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }",
    "unterminated_string": "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3, 4), }",
    "nul_in_header": "{'descr': '<f4\0', 'fortran_order': False, 'shape': (2, 3, 4), }",
}
data24 = np.arange(24, dtype=np.float32).tobytes()
for name, header in headers.items():
    add("npy", f"header_{name}", npy_header(header, data24), INSPECT_DATA, ext=".npy")
add("npy", "v2_shape_1e12", npy_header("{'descr': '|u1', 'fortran_order': False, 'shape': (1000000, 1000000), }", b"", (2, 0)), INSPECT_DATA, ext=".npy")
add("npy", "bool_data_short", npy_header("{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", b"\1\0"), INSPECT_DATA, ext=".npy")

# --- npz -----------------------------------------------------------------------------------------


def npz(arrays, compress=False):
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


demo_model = onnx.load(DEMO)
image = np.linspace(-1, 1, 3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32)
RUN_INPUTS = ["run", "{model}", "--ref", "--load-inputs", "{file}"]
good_npz = npz({"image": image})
good_npz_deflated = npz({"image": image}, compress=True)
add("npz", "empty", b"", INSPECT_DATA, ext=".npz")
add("npz", "missing", None, RUN_INPUTS, ext=".npz")
for cut in truncations(good_npz, 10):
    add("npz", f"truncated_{cut}", good_npz[:cut], INSPECT_DATA, ext=".npz")
for cut in truncations(good_npz_deflated, 8):
    add("npz", f"deflated_truncated_{cut}", good_npz_deflated[:cut], RUN_INPUTS, ext=".npz")


def patch(data, offset, value):
    b = bytearray(data)
    b[offset:offset + len(value)] = value
    return bytes(b)


eocd = good_npz.rfind(b"PK\x05\x06")
cd = good_npz.rfind(b"PK\x01\x02")
data_start = 30 + struct.unpack_from("<H", good_npz, 26)[0] + struct.unpack_from("<H", good_npz, 28)[0]
add("npz", "bad_crc", patch(good_npz, data_start + 200, b"\xAB"), INSPECT_DATA, ext=".npz")
add("npz", "method_bzip2", patch(patch(good_npz, 8, b"\x0c\x00"), cd + 10, b"\x0c\x00"), INSPECT_DATA, ext=".npz")
add("npz", "encrypted", patch(patch(good_npz, 6, b"\x01\x00"), cd + 8, b"\x01\x00"), INSPECT_DATA, ext=".npz")
add("npz", "cd_offset_past_end", patch(good_npz, eocd + 16, b"\xff\xff\xff\x7f"), INSPECT_DATA, ext=".npz")
add("npz", "cd_size_huge", patch(good_npz, eocd + 12, b"\xff\xff\xff\x7f"), INSPECT_DATA, ext=".npz")
add("npz", "entry_count_wrong", patch(patch(good_npz, eocd + 8, b"\x05\x00"), eocd + 10, b"\x05\x00"), INSPECT_DATA, ext=".npz")
add("npz", "local_offset_past_end", patch(good_npz, cd + 42, b"\x00\x00\xff\x7f"), INSPECT_DATA, ext=".npz")
add("npz", "name_length_huge", patch(good_npz, cd + 28, b"\xff\xff"), INSPECT_DATA, ext=".npz")
add("npz", "no_eocd", good_npz[:eocd] + b"XK\x05\x06" + good_npz[eocd + 4:], INSPECT_DATA, ext=".npz")
add("npz", "multi_disk", patch(good_npz, eocd + 4, b"\x01\x00"), INSPECT_DATA, ext=".npz")
d_eocd = good_npz_deflated.rfind(b"PK\x05\x06")
d_cd = good_npz_deflated.rfind(b"PK\x01\x02")
d_start = 30 + struct.unpack_from("<H", good_npz_deflated, 26)[0] + struct.unpack_from("<H", good_npz_deflated, 28)[0]
add("npz", "deflate_corrupt", patch(good_npz_deflated, d_start, b"\xff\xff\xff\xff"), INSPECT_DATA, ext=".npz")
add("npz", "deflate_declared_small", patch(good_npz_deflated, d_cd + 24, b"\x10\x00\x00\x00"), INSPECT_DATA, ext=".npz")
add("npz", "deflate_declared_huge", patch(good_npz_deflated, d_cd + 24, b"\xff\xff\xff\x7f"), INSPECT_DATA, ext=".npz")


def zip_of(members, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


add("npz", "member_not_npy", zip_of([("image.npy", b"hello")]), RUN_INPUTS, ext=".npz")
add("npz", "member_bad_header", zip_of([("image.npy", npy_header(headers["shape_negative"], data24))]), RUN_INPUTS, ext=".npz")
add("npz", "member_1e12", zip_of([("image.npy", npy_header(headers["shape_1e12"]))]), RUN_INPUTS, ext=".npz")
add("npz", "duplicate_member", zip_of([("image.npy", npy(image)), ("image.npy", npy(image))]), RUN_INPUTS, ext=".npz")
add("npz", "zip_slip_member", zip_of([("../../image.npy", npy(image))]), RUN_INPUTS, ext=".npz")
add("npz", "wrong_name", zip_of([("picture.npy", npy(image))]), RUN_INPUTS, ext=".npz")
add("npz", "wrong_dtype", npz({"image": image.astype(np.int64)}), RUN_INPUTS, ext=".npz")
add("npz", "wrong_shape", npz({"image": image.reshape(3, 1, 32, 32)}), RUN_INPUTS, ext=".npz")
add("npz", "empty_input", npz({"image": np.zeros((1, 3, 0, 32), np.float32)}), RUN_INPUTS, ext=".npz")
add("npz", "scalar_input", npz({"image": np.float32(1)}), RUN_INPUTS, ext=".npz")
add("npz", "no_members", zip_of([]), RUN_INPUTS, ext=".npz")

# --- TensorProto .pb ------------------------------------------------------------------------------

good_pb = numpy_helper.from_array(image, "image").SerializeToString()


def parses_as_tensor(data):
    try:
        TensorProto().ParseFromString(data)
        return True
    except Exception:
        return False


for cut in truncations(good_pb, 14):
    if not parses_as_tensor(good_pb[:cut]):
        add("pb", f"truncated_{cut}", good_pb[:cut], INSPECT_DATA, ext=".pb")
add("pb", "empty", b"", INSPECT_DATA, ext=".pb")
add("pb", "garbage", b"\xff" * 40, INSPECT_DATA, ext=".pb")
add("pb", "missing", None, RUN_INPUTS, ext=".pb")
pb_cases = {
    "raw_short": raw_tensor("image", [1, 3, 32, 32], b"\0" * 100),
    "raw_long": raw_tensor("image", [1, 3], b"\0" * 100),
    "dims_1e12": raw_tensor("image", [1000000, 1000000], b""),
    "dims_overflow": raw_tensor("image", [1 << 62, 1 << 62, 16], b""),
    "dims_negative": raw_tensor("image", [-1, 3], b"\0" * 12),
    "dtype_0": raw_tensor("image", [2], b"\0" * 8, 0),
    "dtype_999": raw_tensor("image", [2], b"\0" * 8, 999),
    "dtype_complex128": raw_tensor("image", [2], b"\0" * 32, TensorProto.COMPLEX128),
    "float_data_count": TensorProto(name="image", data_type=TensorProto.FLOAT, dims=[4], float_data=[1, 2, 3]),
    "int64_data_for_float": TensorProto(name="image", data_type=TensorProto.FLOAT, dims=[2], int64_data=[1, 2]),
    "string_raw": raw_tensor("image", [2], b"ab", TensorProto.STRING),
    "external_escape": external("../../etc/passwd", dims=(2,)),
    "external_absolute": external("/etc/passwd", dims=(2,)),
    "external_missing": external("nothing_here.bin", dims=(2,)),
    "wrong_dtype_for_input": numpy_helper.from_array(image.astype(np.float64), "image"),
    "wrong_shape_for_input": numpy_helper.from_array(image.reshape(1, 3, 1024), "image"),
}
pb_cases["external_escape"].name = pb_cases["external_absolute"].name = pb_cases["external_missing"].name = "image"
seg = raw_tensor("image", [2], b"\0" * 8)
seg.segment.begin, seg.segment.end = 0, 1
pb_cases["segment"] = seg
for name, tensor in pb_cases.items():
    cmd = RUN_INPUTS if name.startswith("wrong_") or name.startswith("external") else INSPECT_DATA
    add("pb", name, tensor.SerializeToString(), cmd, ext=".pb")
# An ONNX test folder whose input_0.pb is hostile.
tf = os.path.join(OUT, "pb", "test_folder", "test_data_set_0")
os.makedirs(tf, exist_ok=True)
with open(os.path.join(tf, "input_0.pb"), "wb") as f:
    f.write(pb_cases["dims_1e12"].SerializeToString())
CASES.append({"name": "pb/test_folder", "format": "pb", "file": os.path.dirname(tf), "args": RUN_INPUTS, "expect": 2})
tf2 = os.path.join(OUT, "pb", "test_folder_duplicate", "test_data_set_0")
os.makedirs(tf2, exist_ok=True)
for n in ("input_1.pb", "input_01.pb"):
    with open(os.path.join(tf2, n), "wb") as f:
        f.write(good_pb)
CASES.append({"name": "pb/test_folder_duplicate", "format": "pb", "file": os.path.dirname(tf2), "args": INSPECT_DATA, "expect": 2})

# --- Polygraphy JSON ------------------------------------------------------------------------------


def ndarray(array_bytes):
    return {"array": base64.b64encode(array_bytes).decode(), "polygraphy_class": "ndarray"}


def feeds(obj):
    return json.dumps(obj, indent=4)


RUN_OUTPUTS = ["run", "{model}", "--ref", "--load-outputs", "{file}"]
good_feed = [{"image": ndarray(npy(image))}]
good_feed_text = feeds(good_feed)


def run_results(outputs, runner="onnxrt-runner-N0-01/01/25-00:00:00", runtime=0.001):
    it = {"outputs": outputs, "runtime": runtime, "runner_name": runner, "polygraphy_class": "IterationResult"}
    return {"lst": [[runner, [it]]], "polygraphy_class": "RunResults"}


probs = np.full((1, 10), 0.1, np.float32)
good_results_text = feeds(run_results({"probs": ndarray(npy(probs))}))


def invalid_json(text):
    try:
        json.loads(text)
        return False
    except Exception:
        return True


for base, label, cmd in ((good_feed_text, "feeds", RUN_INPUTS), (good_results_text, "results", RUN_OUTPUTS)):
    add("json", f"{label}_empty", "", cmd, ext=".json")
    for cut in truncations(base, 10):
        if invalid_json(base[:cut]):
            add("json", f"{label}_truncated_{cut}", base[:cut], cmd, ext=".json")
    add("json", f"{label}_deep_lists", "[" * 10000 + "]" * 10000, cmd, ext=".json")
    add("json", f"{label}_deep_objects", '{"a":' * 10000 + "1" + "}" * 10000, cmd, ext=".json")
    add("json", f"{label}_deep_unclosed", "[" * 100000, cmd, ext=".json")
    add("json", f"{label}_invalid_utf8", base.encode()[:20] + b"\xff\xfe" + base.encode()[20:], cmd, ext=".json")
    add("json", f"{label}_nul", base[:5] + "\0" + base[5:], cmd, ext=".json")

bad_arrays = {
    "bad_base64": {"array": "!!!not base64!!!", "polygraphy_class": "ndarray"},
    "truncated_npy": ndarray(npy(image)[:100]),
    "npy_shape_1e12": ndarray(npy_header(headers["shape_1e12"])),
    "npy_negative": ndarray(npy_header(headers["shape_negative"], data24)),
    "npy_deep_header": ndarray(npy_header(headers["shape_deep_nesting"], data24)),
    "unknown_class": {"array": "", "polygraphy_class": "Frobnicator"},
    "torch": {"array": "", "polygraphy_class": "Tensor"},
    "untagged": {"array": base64.b64encode(npy(image)).decode()},
    "array_not_string": {"array": 5, "polygraphy_class": "ndarray"},
    "lazy_deep": None,
    "formatted_1e12": {"array": ndarray(npy(image)), "shape": [1000000, 1000000], "polygraphy_class": "FormattedArray"},
    "formatted_negative": {"array": ndarray(npy(image)), "shape": [-1, 3072], "polygraphy_class": "FormattedArray"},
    "wrong_dtype": ndarray(npy(image.astype(np.float16))),
    "wrong_shape": ndarray(npy(image.reshape(3, 32, 32))),
    "number": 4,
    "null": None,
}
lazy = ndarray(npy(image))
for _ in range(50):
    lazy = {"values": lazy, "polygraphy_class": "LazyArray"}
bad_arrays["lazy_deep"] = lazy
for name, value in bad_arrays.items():
    add("json", f"feeds_array_{name}", feeds([{"image": value}]), RUN_INPUTS, ext=".json")
    # Well-formed results of another dtype or shape are a failed comparison (exit 1), not bad input.
    expect = 1 if name in ("wrong_dtype", "wrong_shape") else 2
    add("json", f"results_array_{name}", feeds(run_results({"probs": value})), RUN_OUTPUTS, expect=expect, ext=".json")
structure = {
    "feeds_not_list": (feeds({"image": ndarray(npy(image))}), RUN_INPUTS),
    "feeds_list_of_numbers": (feeds([1, 2, 3]), RUN_INPUTS),
    "feeds_empty_list": (feeds([]), RUN_INPUTS),
    "feeds_missing_input": (feeds([{"other": ndarray(npy(image))}]), RUN_INPUTS),
    "results_not_tagged": (feeds({"lst": []}), RUN_OUTPUTS),
    "results_lst_not_list": (feeds({"lst": 5, "polygraphy_class": "RunResults"}), RUN_OUTPUTS),
    "results_pair_wrong": (feeds({"lst": [["runner"]], "polygraphy_class": "RunResults"}), RUN_OUTPUTS),
    "results_iterations_not_list": (feeds({"lst": [["runner", 5]], "polygraphy_class": "RunResults"}), RUN_OUTPUTS),
    "results_runner_not_string": (feeds({"lst": [[5, []]], "polygraphy_class": "RunResults"}), RUN_OUTPUTS),
    "results_outputs_not_object": (feeds(run_results([1, 2])), RUN_OUTPUTS),
    "results_runtime_string": (feeds(run_results({"probs": ndarray(npy(probs))}, runtime="fast")), RUN_OUTPUTS),
    "results_wrong_class": (feeds({"lst": [], "polygraphy_class": "TacticReplayData"}), RUN_OUTPUTS),
    "results_list": (feeds([run_results({})]), RUN_OUTPUTS),
    "results_huge_number": (good_results_text.replace('"runtime": 0.001', '"runtime": 1e999'), RUN_OUTPUTS),
}
for name, (text, cmd) in structure.items():
    add("json", name, text, cmd, ext=".json")
for name in ("feeds_deep_lists", "results_truncated_1"):
    CASES.append(dict(CASES[[c["name"] for c in CASES].index(f"json/{name}")], name=f"json/inspect_{name}", args=INSPECT_DATA))

# --- Files Vernier writes: plans, tactic replays, calibration and timing caches, debug replays ----

work = os.path.join(OUT, "vernier_made")
os.makedirs(work, exist_ok=True)
plan_path, tactics_path, cache_path, timing_path = (
    os.path.join(work, n) for n in ("plan.json", "tactics.json", "cache.json", "timing.json"))
subprocess.run([VERNIER, "-q", "convert", DEMO, "-o", plan_path, "--save-tactics", tactics_path, "--deterministic"],
               check=True, stdout=subprocess.DEVNULL)
subprocess.run([VERNIER, "-q", "convert", DEMO, "-o", os.path.join(work, "timed_plan.json"), "--timing-cache", timing_path],
               check=True, stdout=subprocess.DEVNULL)
subprocess.run([VERNIER, "-q", "run", DEMO, "--engine", "--int8", "--calibration-cache", cache_path, "--deterministic"],
               check=True, stdout=subprocess.DEVNULL)
# A layer-wise report with its digests (exit code 1: the planted fault fails it).
report_path = os.path.join(work, "report.json")
subprocess.run([VERNIER, "-q", "run", DEMO, "--ref", "--engine", "--mark-all", "--deterministic", "--threads", "1",
                "--inject-fault", "layer=conv2,kind=scale,factor=1.5", "--report-json", report_path],
               check=False, stdout=subprocess.DEVNULL)
RUN_PLAN = ["run", "{model}", "--engine", "--load-engine", "{file}"]
RUN_TACTICS = ["run", "{model}", "--engine", "--load-tactics", "{file}"]
RUN_CACHE = ["run", "{model}", "--engine", "--int8", "--calibration-cache", "{file}"]
CONVERT_TIMING = ["convert", "{model}", "-o", "plan.json", "--timing-cache", "{file}"]
BROWSE = ["browse", "{file}", "--model", "{model}"]
REDUCE_REPLAY = ["debug", "reduce", "{model}", "-o", "reduced.onnx", "--builtin-check", "--load-debug-replay", "{file}"]
replay = {f"_N{i}": {"state": {"num_nodes": 10 - i}, "iteration_info": {"iteration": i}, "success": i % 2 == 0,
                     "polygraphy_class": "IterationContext"} for i in range(3)}
WRONG_VALUES = [None, 7, -1, "text", [], {}, True, 1e308, [[[[]]]]]


def json_paths(value, path=()):
    """Every (path, value) in a JSON document, parents before children."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, path + (i,))


def replaced(doc, path, new):
    doc = json.loads(json.dumps(doc))
    target = doc
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = new
    return doc


def retyped(doc, budget, required):
    """Documents in which one required field holds a value of the wrong JSON type."""
    out = []
    for path, value in json_paths(doc):
        if not path or not required(path):
            continue
        for new in WRONG_VALUES:
            if type(new) is type(value) or (isinstance(value, (int, float)) and isinstance(new, (int, float)) and not isinstance(new, bool)):
                continue
            out.append((path, new))
    RNG.shuffle(out)
    return [(p, n, replaced(doc, p, n)) for p, n in out[:budget]]


def label(path, new):
    return "_".join(str(p) for p in path)[:60].replace(".", "-") + "_" + type(new).__name__


timing = json.load(open(timing_path))
first_key = list(timing["entries"])[0]
vernier_files = {
    "plan": (json.load(open(plan_path)), [INSPECT_MODEL, RUN_PLAN],
             lambda p: p[0] in ("format", "version", "layers", "outputs") and (p[0] != "layers" or len(p) <= 3)),
    "tactics": (json.load(open(tactics_path)), [["inspect", "tactics", "{file}"], RUN_TACTICS],
                lambda p: p[0] == "replay" and len(p) <= 3),
    "cache": (json.load(open(cache_path)), [RUN_CACHE], lambda p: p[0] in ("format", "version", "method", "scales") or p == ("model", "hash")),
    # One entry stands for all: the keys are long layer signatures.
    "timing": (timing, [CONVERT_TIMING], lambda p: p[0] in ("format", "version") or p in (("entries",), ("entries", first_key))),
    "replay": (replay, [REDUCE_REPLAY], lambda p: len(p) == 1 or (len(p) == 2 and p[-1] in ("success", "state", "verdict"))),
    # Fields the browser reads: the comparisons, each tensor's verdict and digest, each layer's.
    "report": (json.load(open(report_path)), [BROWSE],
               lambda p: p[:1] == ("comparisons",) and (len(p) <= 3 or (len(p) >= 5 and p[3] in ("tensors", "layers") and
                         p[-1] in ("name", "passed", "digest", "shape", "slice", "rows", "cols", "count", "worst",
                                   "heatmaps", "values", "index", "accumulated", "rank")))),
}
for fmt, (doc, cmds, required) in vernier_files.items():
    text = json.dumps(doc, indent=4)
    for k, cmd in enumerate(cmds):
        add(fmt, f"empty_{k}", "", cmd, ext=".json")
        if fmt not in ("cache", "timing"):  # a missing cache is created by calibrating or timing
            add(fmt, f"missing_{k}", None, cmd, ext=".json")
        add(fmt, f"deep_lists_{k}", "[" * 10000 + "]" * 10000, cmd, ext=".json")
        add(fmt, f"deep_objects_{k}", '{"a":' * 10000 + "1" + "}" * 10000, cmd, ext=".json")
        add(fmt, f"not_object_{k}", "[1, 2, 3]", cmd, ext=".json")
        for cut in truncations(text, 6):
            if invalid_json(text[:cut]):
                add(fmt, f"truncated_{cut}_{k}", text[:cut], cmd, ext=".json")
        for path, new, bad in retyped(doc, 12, required):
            add(fmt, f"{label(path, new)}_{k}", json.dumps(bad, indent=4), cmd, ext=".json")
    if fmt != "replay":
        # Deep nesting is refused even under a key the reader would ignore.
        add(fmt, "deep_value", json.dumps(doc)[:-1] + ', "deep": ' + "[" * 10000 + "]" * 10000 + "}", cmds[-1], ext=".json")

plan = json.load(open(plan_path))
add("plan", "version_999", json.dumps(replaced(plan, ("version",), 999)), RUN_PLAN, ext=".json")
add("plan", "no_layers", json.dumps({k: v for k, v in plan.items() if k != "layers"}), RUN_PLAN, ext=".json")
add("plan", "wrong_model_hash", json.dumps(replaced(plan, ("model", "hash"), "0x0000000000000000")), RUN_PLAN, ext=".json")
add("plan", "input_shape_1e12", json.dumps(replaced(plan, ("build", "input_shapes"), {"image": [1000000, 1000000]})), RUN_PLAN, ext=".json")
add("plan", "input_shape_negative", json.dumps(replaced(plan, ("build", "input_shapes"), {"image": [-1, 3, 32, 32]})), RUN_PLAN, ext=".json")
first = plan["layers"][0]
add("plan", "layer_unknown_tactic", json.dumps(replaced(plan, ("layers", 0, "tactic"), "no_such_tactic")), RUN_PLAN, ext=".json")
add("plan", "layer_unknown_node", json.dumps(replaced(plan, ("layers", 0, "nodes"), ["ghost"])), RUN_PLAN, ext=".json")
add("plan", "layer_unknown_precision", json.dumps(replaced(plan, ("layers", 0, "precision"), "fp3")), RUN_PLAN, ext=".json")
add("plan", "layers_duplicated", json.dumps(replaced(plan, ("layers",), plan["layers"] + plan["layers"])), RUN_PLAN, ext=".json")
add("plan", "layers_reversed", json.dumps(replaced(plan, ("layers",), plan["layers"][::-1])), RUN_PLAN, ext=".json")
add("plan", "unknown_output", json.dumps(replaced(plan, ("outputs",), ["ghost"])), RUN_PLAN, ext=".json")
tactics = json.load(open(tactics_path))
layer0 = list(tactics["replay"])[0]
add("tactics", "unknown_layer", json.dumps(replaced(tactics, ("replay",), {"ghost": tactics["replay"][layer0]})), RUN_TACTICS, ext=".json")
add("tactics", "tactic_id_unknown", json.dumps(replaced(replaced(tactics, ("replay", layer0, "tactic"), 12345), ("replay", layer0, "vernier"), {})), RUN_TACTICS, ext=".json")
add("tactics", "tactic_name_unknown", json.dumps(replaced(tactics, ("replay", layer0, "vernier", "tactic"), "no_such_tactic")), RUN_TACTICS, ext=".json")
add("tactics", "precision_unknown", json.dumps(replaced(tactics, ("replay", layer0, "vernier", "precision"), "fp3")), RUN_TACTICS, ext=".json")
add("tactics", "wrong_class", json.dumps(replaced(tactics, ("polygraphy_class",), "RunResults")), ["inspect", "tactics", "{file}"], ext=".json")
cache = json.load(open(cache_path))
add("cache", "wrong_model_hash", json.dumps(replaced(cache, ("model", "hash"), "0x0000000000000000")), RUN_CACHE, ext=".json")
add("cache", "scale_negative", json.dumps(replaced(cache, ("scales", list(cache["scales"])[0]), -1.0)), RUN_CACHE, ext=".json")
add("cache", "scale_zero", json.dumps(replaced(cache, ("scales", list(cache["scales"])[0]), 0)), RUN_CACHE, ext=".json")
add("cache", "scale_overflows_float", json.dumps(replaced(cache, ("scales", list(cache["scales"])[0]), 1e300)), RUN_CACHE, ext=".json")
add("cache", "scale_denormal", json.dumps(replaced(cache, ("scales", list(cache["scales"])[0]), 1e-300)), RUN_CACHE, ext=".json")
add("cache", "method_unknown", json.dumps(replaced(cache, ("method",), "vibes")), RUN_CACHE, ext=".json")
add("timing", "entry_negative", json.dumps(replaced(timing, ("entries", first_key), -1.0)), CONVERT_TIMING, ext=".json")
add("timing", "entry_overflows_double", json.dumps(replaced(timing, ("entries", first_key), "BIG")).replace('"BIG"', "1e999"), CONVERT_TIMING, ext=".json")
add("timing", "entry_key_control_bytes", json.dumps(replaced(timing, ("entries",), {"a\nb\x1b[2J": "slow"})), CONVERT_TIMING, ext=".json")
add("timing", "version_2", json.dumps(replaced(timing, ("version",), 2)), CONVERT_TIMING, ext=".json")
add("replay", "verdict_unknown", json.dumps(replaced(replay, ("_N0", "verdict"), "maybe")), REDUCE_REPLAY, ext=".json")
# The state is copied into the replay: a deep one would recurse in the copy.
add("replay", "state_deep", json.dumps(replay)[:-1] + ', "_N9": {"success": true, "state": ' + '{"a": ' * 100000 + "1" + "}" * 100000 + "}}", REDUCE_REPLAY, ext=".json")
add("replay", "entry_not_object", json.dumps(replaced(replay, ("_N0",), [1])), REDUCE_REPLAY, ext=".json")

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump({"model": DEMO, "cases": CASES}, f, indent=1)
print(f"{len(CASES)} cases in {OUT}/manifest.json")
