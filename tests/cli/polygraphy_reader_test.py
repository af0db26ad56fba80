#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Interoperability with Polygraphy's JSON files, both ways, without Polygraphy installed.

Polygraphy (polygraphy/json/serde.py) decodes with json.loads(object_pairs_hook=...) dispatching
on the "polygraphy_class" key, and an ndarray is np.load() of the base64-decoded bytes with
allow_pickle=False. This script decodes Vernier's --save-outputs/--save-inputs files the same
way, and encodes a RunResults file the way Polygraphy's encoder does for Vernier to read.

Usage: polygraphy_reader_test.py VERNIER_BIN MODEL
"""
import base64
import io
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TYPE_MARKER = "polygraphy_class"


def decode_hook(pairs):
    keys = [k for k, _ in pairs]
    d = dict(pairs)
    cls = d.get(TYPE_MARKER)
    if cls is None:
        return d
    # Polygraphy's encoder appends the marker last; a reader does not care, but byte
    # compatibility with Polygraphy's own files does.
    assert keys[-1] == TYPE_MARKER, f"{cls}: marker not last in {keys}"
    if cls == "ndarray":
        return np.load(io.BytesIO(base64.b64decode(d["array"], validate=True)), allow_pickle=False)
    if cls == "LazyArray":
        return d["values"]
    if cls == "IterationResult":
        return {"outputs": d["outputs"], "runtime": d["runtime"], "runner_name": d["runner_name"]}
    if cls == "RunResults":
        return d["lst"]
    raise AssertionError(f"unknown class {cls}")


def encode_ndarray(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return {"array": base64.b64encode(buf.getvalue()).decode(), TYPE_MARKER: "ndarray"}


def main():
    vernier, model = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "out.json")
        out_npz = os.path.join(tmp, "out.npz")
        inputs_json = os.path.join(tmp, "inputs.json")
        for target in (out_json, out_npz):
            subprocess.run([vernier, "run", model, "--ref", "--mark-all", "--save-inputs", inputs_json,
                            "--save-outputs", target], check=True, stdout=subprocess.DEVNULL)

        # Vernier -> Polygraphy's decoder.
        with open(out_json) as f:
            text = f.read()
        lst = json.loads(text, object_pairs_hook=decode_hook)
        assert len(lst) == 1, lst
        runner, iterations = lst[0]
        assert re.fullmatch(r"ref-runner-N0-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d", runner), runner
        assert len(iterations) == 1
        outputs = iterations[0]["outputs"]
        npz = np.load(out_npz)
        assert list(outputs.keys()) == list(npz.keys()), (list(outputs.keys()), list(npz.keys()))
        for name, arr in outputs.items():
            assert arr.dtype == np.float32, (name, arr.dtype)
            np.testing.assert_array_equal(arr, npz[name])
        assert abs(float(outputs["probs"].sum()) - 1.0) < 1e-5
        # Polygraphy writes json.dumps(indent=4): the same text must come back from re-encoding.
        assert text == json.dumps(json.loads(text), indent=4), "not json.dumps(indent=4) layout"

        with open(inputs_json) as f:
            feeds = json.load(f, object_pairs_hook=decode_hook)
        assert isinstance(feeds, list) and len(feeds) == 1
        rng = np.random.RandomState(1)
        expected = (rng.random_sample(size=(1, 3, 32, 32)) * (1.0 - 0.0) + 0.0).astype(np.float32)
        np.testing.assert_array_equal(feeds[0]["image"], expected)

        # Polygraphy's encoder -> Vernier.
        arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0
        doc = {"lst": [["onnxrt-runner-N0-11/21/26-08:37:34",
                        [{"outputs": {"y": {"values": encode_ndarray(arr), TYPE_MARKER: "LazyArray"}},
                          "runtime": 0.00031566619873046875,
                          "runner_name": "onnxrt-runner-N0-11/21/26-08:37:34",
                          TYPE_MARKER: "IterationResult"}]]],
               TYPE_MARKER: "RunResults"}
        poly = os.path.join(tmp, "poly.json")
        with open(poly, "w") as f:
            f.write(json.dumps(doc, indent=4))
        shown = subprocess.run([vernier, "inspect", "data", poly], check=True, capture_output=True, text=True).stdout
        assert "y [dtype=float32, shape=(2, 3, 4)]" in shown, shown
        assert f"mean={float(arr.astype(np.float64).mean()):.5g}," in shown, shown
        assert f"max={float(arr.max()):.5g} at (1, 2, 3)" in shown, shown
    print("polygraphy interop: vernier files decode with Polygraphy's rules, and Polygraphy-encoded files load")


if __name__ == "__main__":
    main()
