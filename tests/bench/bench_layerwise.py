#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Layer-wise comparison cost against the plain runs it replaces, in one run.

Usage: /usr/bin/python3 bench_layerwise.py VERNIER_BIN [--threads N] [--iterations N] [--models a,b]
For each model (default: ResNet-18 and the Transformer encoder fixture), times
    ref       `vernier run --ref`                       (plain reference run)
    engine    `vernier run --engine --fp16`             (plain engine run)
    layerwise `vernier run --ref --engine --fp16 --mark-all`  (streamed, every tensor compared)
and prints the layer-wise time over the sum of the two plain runs (goal <= 1.3) and the layer-wise
peak resident memory over the plain reference run's (goal <= 1.5). Times are per inference after
a warm-up; the engine is built deterministically so timing its tactics is left out. The three runs
repeat in turn --rounds times (default 9), and each row gives the median of the rounds' times, so
that a stall of a busy machine in one run does not set the ratio; memory is the largest layer-wise
peak of the rounds over the median reference peak. Each round's own time ratio is printed under
its row, as a measure of the machine's noise.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_torchvision  # noqa: E402


def run(vernier, args):
    return subprocess.run([vernier, "run"] + args, capture_output=True, text=True).stdout


def plain(vernier, model, backend, threads, iterations):
    out = run(vernier, [model] + backend + ["--threads", str(threads), "--warm-up", "1", "--iterations",
                                            str(iterations)])
    ms = float(re.search(r"Average inference time: ([0-9.e+-]+) ms", out).group(1))
    peak = float(re.search(r"Peak memory: ([0-9.]+) MiB", out).group(1))
    return ms, peak


def layerwise(vernier, model, threads, iterations):
    out = run(vernier, [model, "--ref", "--engine", "--fp16", "--deterministic", "--mark-all", "--threads",
                        str(threads), "--iterations", str(iterations + 1)])
    times = [float(m) for m in re.findall(r"Completed in ([0-9.e+-]+) ms", out)]
    if len(times) != iterations + 1:
        raise RuntimeError("layer-wise run failed:\n" + out)
    held = max(float(m) for m in re.findall(r"Tensors held at most: ([0-9.]+) MiB", out))
    peak = float(re.findall(r"Peak memory: ([0-9.]+) MiB", out)[-1])
    # The first iteration warms up, as the plain runs' --warm-up does.
    return sum(times[1:]) / iterations, peak, held


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--models", default="resnet18,transformer_encoder")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"threads={args.threads} iterations={args.iterations} rounds={args.rounds}")
    print(f"{'model':<22}{'ref_ms':>9}{'engine_ms':>11}{'layerwise_ms':>14}{'time_ratio':>12}"
          f"{'ref_MiB':>9}{'layerwise_MiB':>15}{'held_MiB':>10}{'mem_ratio':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            out_dir = os.path.join(tmp, name)
            subprocess.run([sys.executable, export_torchvision.__file__, name, out_dir], check=True,
                           stdout=subprocess.DEVNULL)
            model = os.path.join(out_dir, "model.onnx")
            rounds = []
            for _ in range(args.rounds):
                ref = plain(args.vernier, model, ["--ref"], args.threads, args.iterations)
                eng = plain(args.vernier, model, ["--engine", "--fp16", "--deterministic"], args.threads,
                            args.iterations)
                rounds.append((ref, eng, layerwise(args.vernier, model, args.threads, args.iterations)))
            ref_ms = statistics.median(r[0][0] for r in rounds)
            ref_peak = statistics.median(r[0][1] for r in rounds)
            eng_ms = statistics.median(r[1][0] for r in rounds)
            lw_ms = statistics.median(r[2][0] for r in rounds)
            lw_peak = max(r[2][1] for r in rounds)
            held = max(r[2][2] for r in rounds)
            print(f"{name:<22}{ref_ms:>9.2f}{eng_ms:>11.2f}{lw_ms:>14.2f}{lw_ms / (ref_ms + eng_ms):>12.2f}"
                  f"{ref_peak:>9.1f}{lw_peak:>15.1f}{held:>10.1f}{lw_peak / ref_peak:>11.2f}")
            print("  time ratio per round: " + " ".join(f"{lw[0] / (ref[0] + eng[0]):.2f}" for ref, eng, lw in rounds),
                  flush=True)


if __name__ == "__main__":
    main()
