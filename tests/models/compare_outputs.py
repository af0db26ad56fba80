#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares Vernier's saved outputs with PyTorch's.

Usage: compare_outputs.py VERNIER_NPZ TORCH_NPZ MAX_REL MAX_ABS
Prints, per output, the largest absolute error and the largest relative error |v - t| / |t|
over elements whose |t| is at least 1e-3 of the output's largest magnitude (relative error
means nothing for values that are zero up to rounding). An output passes when that relative
error is within MAX_REL and every element is within MAX_ABS or MAX_REL (Polygraphy's rule).
Exits 1 when an output fails.
"""
import sys

import numpy as np


def main():
    ours, theirs = np.load(sys.argv[1]), np.load(sys.argv[2])
    max_rel, max_abs = float(sys.argv[3]), float(sys.argv[4])
    ok = True
    for name in theirs.keys():
        v = ours[name].astype(np.float64)
        t = theirs[name].astype(np.float64)
        assert v.shape == t.shape, (name, v.shape, t.shape)
        abs_err = np.abs(v - t)
        significant = np.abs(t) >= 1e-3 * np.abs(t).max()
        rel_err = (abs_err[significant] / np.abs(t[significant])).max()
        elem_rel = abs_err / np.maximum(np.abs(t), np.finfo(np.float64).tiny)
        elementwise = bool(np.all((abs_err <= max_abs) | (elem_rel <= max_rel)))
        passed = rel_err <= max_rel and elementwise
        ok = ok and passed
        print(f"{name}: max_abs_err={abs_err.max():.3e} max_rel_err={rel_err:.3e} "
              f"(limits {max_abs:g}, {max_rel:g}) {'PASSED' if passed else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
