#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The engine under test beside the reference backend on the fixture architectures.

Usage: /usr/bin/python3 bench_engine.py VERNIER_BIN [--threads N] [--iterations N] [--models a,b]
For each model, builds fp32 and fp16 plans (timed tactics, builder seed 1), then runs the
reference and each plan in one `vernier run` per precision and prints per-inference times after a
warm-up, with engine/reference ratios (the fp32 engine should not be slower than the reference).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_torchvision  # noqa: E402

MODELS = "resnet18,mobilenet_v2,squeezenet1_1,efficientnet_b0,transformer_encoder,detection_head"


def average_ms(out, runner):
    m = re.search(r"\[I\] " + runner + r"\S*\s+\| Completed .*Average inference time: ([0-9.e+-]+) ms", out)
    if not m:
        raise RuntimeError(f"no timing for {runner}:\n{out}")
    return float(m.group(1))


def timed(vernier, model, inputs, plan, threads, iterations):
    """Reference and engine per-inference times from one run with both."""
    out = subprocess.run([vernier, "run", model, "--ref", "--engine", "--load-engine", plan, "--threads",
                          str(threads), "--warm-up", "2", "--load-inputs"] + [inputs] * iterations +
                         ["--atol", "1", "--rtol", "1"], capture_output=True, text=True).stdout
    return average_ms(out, "ref"), average_ms(out, "engine")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--models", default=MODELS)
    args = parser.parse_args()
    print(f"threads={args.threads} iterations={args.iterations}")
    print(f"{'model':<22}{'ref_ms':>9}{'fp32_ms':>9}{'fp32/ref':>10}{'fp16_ms':>9}{'fp16/ref':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            out_dir = os.path.join(tmp, name)
            subprocess.run([sys.executable, export_torchvision.__file__, name, out_dir], check=True,
                           stdout=subprocess.DEVNULL)
            model = os.path.join(out_dir, "model.onnx")
            inputs = os.path.join(out_dir, "input.npz")
            rows = {}
            for precision, flags in (("fp32", []), ("fp16", ["--fp16"])):
                plan = os.path.join(out_dir, f"{precision}.json")
                subprocess.run([args.vernier, "convert", model, "--builder-seed", "1", "--threads", str(args.threads),
                                "-o", plan] + flags, check=True, stdout=subprocess.DEVNULL)
                rows[precision] = timed(args.vernier, model, inputs, plan, args.threads, args.iterations)
            ref_ms = min(rows["fp32"][0], rows["fp16"][0])
            fp32, fp16 = rows["fp32"][1], rows["fp16"][1]
            print(f"{name:<22}{ref_ms:>9.2f}{fp32:>9.2f}{fp32 / ref_ms:>10.2f}{fp16:>9.2f}{fp16 / ref_ms:>10.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
