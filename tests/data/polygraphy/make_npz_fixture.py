#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates the numpy-written fixtures of tests/io (run from anywhere with /usr/bin/python3).

Outputs, next to this script:
  npz_stored.npz, npz_deflated.npz   np.savez / np.savez_compressed of the same four arrays
  fortran_int32.npy                  an F-contiguous (2, 3, 4) int32 array (fortran_order True)
  v2_header.npy                      a float64 array written with format version 2.0
  numpy_dtypes.json                  a Polygraphy-style feed list: one np.save payload per dtype and shape
                                     case (scalars, empty, 1-D, wide growth padding), plus names that need
                                     ensure_ascii escapes
  runtime_repr.json                  a Polygraphy-style RunResults whose runtimes exercise Python's float repr
  legacy_inputs.json                 a feed list in the legacy marker style with latin-1 and npz payloads

The JSON files are written with json.dumps(obj, indent=4), exactly as Polygraphy's serde does, so the
C++ writer must reproduce them byte for byte.
"""
import base64
import io
import json
import os
from collections import OrderedDict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def npy_bytes(arr):
    f = io.BytesIO()
    np.save(f, arr, allow_pickle=False)
    return f.getvalue()


def ndarray(arr):
    return OrderedDict([("array", base64.b64encode(npy_bytes(arr)).decode()), ("polygraphy_class", "ndarray")])


def lazy(arr):
    return OrderedDict([("values", ndarray(arr)), ("polygraphy_class", "LazyArray")])


def write_json(name, obj):
    with open(path(name), "w") as f:
        f.write(json.dumps(obj, indent=4))


def npz_fixtures():
    arrays = OrderedDict(
        [
            ("a", np.arange(6, dtype=np.float32).reshape(2, 3)),
            ("b", np.int64(-7)),
            ("c", np.array([True, False, True])),
            ("empty", np.zeros((0, 3), dtype=np.float16)),
        ]
    )
    np.savez(path("npz_stored.npz"), **arrays)
    np.savez_compressed(path("npz_deflated.npz"), **arrays)


def npy_fixtures():
    np.save(path("fortran_int32.npy"), np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)))
    with open(path("v2_header.npy"), "wb") as f:
        np.lib.format.write_array(f, np.array([1.5, -2.25, 3.0], dtype=np.float64), version=(2, 0))



def dtype_fixture():
    feed = OrderedDict()
    rng = np.random.RandomState(0)
    for dt in ["float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
               "uint64", "bool"]:
        if dt == "bool":
            values = rng.randint(0, 2, size=(2, 3)).astype(bool)
        elif dt.startswith("float"):
            values = (rng.standard_normal((2, 3)) * 100).astype(dt)
        else:
            info = np.iinfo(dt)
            values = np.array([[info.min, info.max, 0], [1, 2, 3]], dtype=dt)
        feed[dt] = ndarray(values)
        feed[dt + "_scalar"] = ndarray(values.reshape(-1)[1].astype(dt).reshape(()))
        feed[dt + "_1d"] = ndarray(values.reshape(-1))
        feed[dt + "_empty"] = ndarray(np.zeros((0, 4), dtype=dt))
    # A first dimension with many digits shrinks numpy's growth padding; a rank-10 shape crosses into a
    # second 64-byte block; a zero-size array with a huge first dimension combines both.
    feed["wide_first_dim"] = ndarray(np.zeros((123456789, 0), dtype=np.float32))
    feed["rank10"] = ndarray(np.zeros((1,) * 10, dtype=np.float32))
    # Find a shape whose header fills a 64-byte block exactly: numpy then pads with 64 more spaces.
    for shape in [(0,) + (1,) * a + (10,) * b for b in range(8) for a in range(24)]:
        raw = npy_bytes(np.zeros(shape, dtype=np.float32))
        header = raw[10:10 + int.from_bytes(raw[8:10], "little")]
        padlen = len(header) - len(header.rstrip(b" \n")) - 1 - (21 - len(repr(shape[0])))
        if padlen == 64:
            feed["full_block"] = ndarray(np.zeros(shape, dtype=np.float32))
            break
    else:
        raise RuntimeError("no shape fills a 64-byte header block")
    feed["caf\u00e9 \u540d\U0001F600 \"q\" \\ \n\t\x01\x7f/"] = ndarray(np.array([1.0], dtype=np.float32))
    write_json("numpy_dtypes.json", [feed, OrderedDict()])


def runtime_fixture():
    runtimes = [0.00031566619873046875, 2.3603439331054688e-05, 1e-05, 0.0001, 0.5, 123.0, 12345.678, 0.1,
                1e16, 1234567890123456.0, 1e22, 2.5e-300, 5e-324, 1.7976931348623157e308, -0.0, 0.0, None]
    name = "onnxrt-runner-N0-11/21/26-08:37:34"
    iterations = []
    for i, rt in enumerate(runtimes):
        outputs = OrderedDict([("y", lazy(np.array([i], dtype=np.float32)))]) if i % 2 == 0 else OrderedDict()
        iterations.append(OrderedDict([("outputs", outputs), ("runtime", rt), ("runner_name", name),
                                       ("polygraphy_class", "IterationResult")]))
    lst = [[name, iterations], ["trt-runner-N0-11/21/26-08:37:34", []], [name, iterations[:1]]]
    write_json("runtime_repr.json", OrderedDict([("lst", lst), ("polygraphy_class", "RunResults")]))


def legacy_fixture():
    arr = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    marker = "polygraphy_serialized_json_type"
    npz = io.BytesIO()
    np.savez(npz, first=np.array([5, 6], dtype=np.int32), second=np.array([7], dtype=np.int32))
    feed = OrderedDict(
        [
            ("latin1", OrderedDict([("array", npy_bytes(arr).decode("latin-1")),
                                    ("__polygraphy_encoded_ndarray", marker)])),
            ("npz", OrderedDict([("__polygraphy_encoded_ndarray", marker),
                                 ("array", base64.b64encode(npz.getvalue()).decode())])),
            ("lazy", OrderedDict([("__polygraphy_encoded_LazyNumpyArray", marker),
                                  ("values", OrderedDict([("array", base64.b64encode(npy_bytes(arr)).decode()),
                                                          ("__polygraphy_encoded_ndarray", marker)]))])),
        ]
    )
    write_json("legacy_inputs.json", [feed])


if __name__ == "__main__":
    npz_fixtures()
    npy_fixtures()
    dtype_fixture()
    runtime_fixture()
    legacy_fixture()
