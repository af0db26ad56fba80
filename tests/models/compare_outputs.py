#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares Vernier's saved outputs with PyTorch's.

Usage: compare_outputs.py VERNIER_NPZ TORCH_NPZ RTOL ATOL [--max-rel R]
An output passes when every element is within ATOL or within RTOL of PyTorch's value
(Polygraphy's rule). With --max-rel, the largest relative error |v - t| / |t| over elements whose
|t| is at least 1% of the output's largest magnitude must also be at most R: below that, two
correct fp32 implementations differ by more than 1e-4 relative through accumulation order alone
(a ResNet-18 logit of 0.0046 next to a maximum of 4.5 differs by 5e-7 between FMA and non-FMA
builds), so relative error there measures rounding, not correctness. Prints both errors per output; exits 1
when an output fails.
"""
import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ours")
    parser.add_argument("theirs")
    parser.add_argument("rtol", type=float)
    parser.add_argument("atol", type=float)
    parser.add_argument("--max-rel", type=float)
    args = parser.parse_args()
    ours, theirs = np.load(args.ours), np.load(args.theirs)
    ok = True
    for name in theirs.keys():
        v = ours[name].astype(np.float64)
        t = theirs[name].astype(np.float64)
        assert v.shape == t.shape, (name, v.shape, t.shape)
        abs_err = np.abs(v - t)
        elem_rel = abs_err / np.maximum(np.abs(t), np.finfo(np.float64).tiny)
        elementwise = bool(np.all((abs_err <= args.atol) | (elem_rel <= args.rtol)))
        significant = np.abs(t) >= 1e-2 * np.abs(t).max()
        max_rel = float(elem_rel[significant].max()) if significant.any() else 0.0
        passed = elementwise and (args.max_rel is None or max_rel <= args.max_rel)
        ok = ok and passed
        limits = f"rtol {args.rtol:g}, atol {args.atol:g}" + (f", max rel {args.max_rel:g}" if args.max_rel else "")
        print(f"{name}: max_abs_err={abs_err.max():.3e} max_rel_err={max_rel:.3e} over {int(significant.sum())} of "
              f"{t.size} elements ({limits}) "
              f"{'PASSED' if passed else 'FAILED'}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
