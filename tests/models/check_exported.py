#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a model exported by PyTorch 2.x (tests/models/exported/NAME) on a Vernier backend and
compares every output with PyTorch's.

Usage: check_exported.py VERNIER DIR BACKEND
BACKEND is `ref` or `engine` (the fp32 engine). An output passes when
max |vernier - torch| <= 1e-4 * max |torch| + 1e-5 (issue #23's bar for real exports).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("dir")
    parser.add_argument("backend", choices=["ref", "engine"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npz")
        cmd = [args.vernier, "run", os.path.join(args.dir, "model.onnx"), f"--{args.backend}", "--load-inputs",
               os.path.join(args.dir, "input.npz"), "--save-outputs", out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
            print(f"vernier exited {run.returncode}")
            return 1
        ours = np.load(out)
        theirs = np.load(os.path.join(args.dir, "torch_output.npz"))
        ok = True
        for name in theirs.keys():
            if name not in ours:
                print(f"{name}: missing from Vernier's outputs")
                ok = False
                continue
            v, t = ours[name].astype(np.float64), theirs[name].astype(np.float64)
            if v.shape != t.shape:
                print(f"{name}: shape {v.shape}, PyTorch's {t.shape}")
                ok = False
                continue
            err = float(np.abs(v - t).max()) if t.size else 0.0
            bound = 1e-4 * float(np.abs(t).max() if t.size else 0.0) + 1e-5
            passed = err <= bound
            ok = ok and passed
            print(f"{name}: max |err| {err:.3e} <= {bound:.3e} {'PASSED' if passed else 'FAILED'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
