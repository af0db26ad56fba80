#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A real engine through the persistent `ort` runner against one process per check, in one run.

Usage: /usr/bin/python3 bench_runner.py VERNIER_BIN [--model resnet18] [--threads N] [--rounds N]
                                       [--runner ort|ort-python] [--model-path FILE]

1. Reduce checks. `vernier debug reduce` of the model, built in float16 for ONNX Runtime and
   checked against the reference with a tolerance float16 cannot meet (so that the search runs to
   a single layer), two ways that see the same candidates and give the same verdicts:
     persistent  --builtin-check --engine-runner ort: one runner process (Node.js with
                 onnxruntime-node) serves every check; a check costs converting the candidate,
                 loading it into ONNX Runtime and one run.
     per-process --check 'vernier run {candidate} --ref --engine-runner ort --fp16 ...': every check
                 starts a process that starts ONNX Runtime, loads the candidate and compares it
                 with the reference on the candidate's inputs (Polygraphy's way: `polygraphy run
                 polygraphy_debug.onnx --onnxrt ...` per check).
   It prints the seconds per check of each (the search's time over its checks, as debug reduce
   reports it) and their ratio (goal: per-process / persistent >= 5).
2. Local errors. `vernier run MODEL --ref --engine-runner ort --fp16 --mark-all --local-errors`
   (every tensor compared, and every layer run alone on the reference's inputs in one
   isolated-layers run) against the plain `vernier run MODEL --ref --engine-runner ort --fp16`,
   wall time of the whole command, and their ratio.
Every number is the median of --rounds rounds; each round's ratio is printed under its row as a
measure of the machine's noise.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_torchvision  # noqa: E402

# Float16 cannot meet this: every candidate with a convolution fails, so the search ends at one layer.
TOLERANCE = ["--atol", "1e-7", "--rtol", "0"]
RUNNER = ["ort"]  # --runner


def wall(argv, cwd):
    start = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - start, p


def search_of(out):
    """The checks and the seconds of the search (the reference run and the runner start before it
    are left out: they happen once per session on both sides)."""
    m = re.search(r"Finished (\d+) check\(s\) in ([0-9.e+-]+) s", out)
    if not m:
        raise RuntimeError("debug reduce did not finish:\n" + out)
    return int(m.group(1)), float(m.group(2))


def minimal_of(out):
    return re.search(r"node\(s\) kept: (.*)", out).group(1)


def reduce_persistent(vernier, model, threads, cwd):
    _, p = wall([vernier, "debug", "reduce", model, "-o", "min_persistent.onnx", "--builtin-check",
                       "--engine-runner", RUNNER[0], "--fp16", "--threads", str(threads), "--no-progress"] + TOLERANCE,
                      cwd)
    if p.returncode != 0:
        raise RuntimeError("persistent reduce failed:\n" + p.stdout + p.stderr)
    checks, seconds = search_of(p.stdout)
    return seconds, checks, minimal_of(p.stdout)


def reduce_per_process(vernier, model, threads, cwd):
    check = [vernier, "run", "vernier_debug.onnx", "--ref", "--engine-runner", RUNNER[0], "--fp16", "--load-inputs",
             "vernier_debug_inputs.json", "--threads", str(threads)] + TOLERANCE
    _, p = wall([vernier, "debug", "reduce", model, "-o", "min_process.onnx", "--no-progress", "--force",
                       "--threads", str(threads), "--check"] + check, cwd)
    if p.returncode != 0:
        raise RuntimeError("per-process reduce failed:\n" + p.stdout + p.stderr)
    checks, seconds = search_of(p.stdout)
    return seconds, checks, minimal_of(p.stdout)


def run_seconds(vernier, model, extra, threads, cwd):
    seconds, p = wall([vernier, "run", model, "--ref", "--engine-runner", RUNNER[0], "--fp16", "--threads",
                       str(threads)] + extra, cwd)
    if p.returncode not in (0, 1):
        raise RuntimeError("vernier run failed:\n" + p.stdout + p.stderr)
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runner", default="ort", help="the runner to time (ort, ort-python)")
    parser.add_argument("--model-path", help="an ONNX file to use instead of exporting --model")
    args = parser.parse_args()
    RUNNER[0] = args.runner
    vernier = os.path.abspath(args.vernier)
    print(f"model={args.model} runner={args.runner} threads={args.threads} rounds={args.rounds}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.model_path:
            model = os.path.abspath(args.model_path)
        else:
            out_dir = os.path.join(tmp, args.model)
            subprocess.run([sys.executable, export_torchvision.__file__, args.model, out_dir], check=True,
                           stdout=subprocess.DEVNULL)
            model = os.path.join(out_dir, "model.onnx")

        rounds = []
        for i in range(args.rounds):
            cwd = os.path.join(tmp, f"round{i}")
            os.makedirs(cwd)
            persistent = reduce_persistent(vernier, model, args.threads, cwd)
            process = reduce_per_process(vernier, model, args.threads, cwd)
            if persistent[1] != process[1] or persistent[2] != process[2]:
                raise RuntimeError(f"the two reductions differ: {persistent[1:]} vs {process[1:]}")
            rounds.append((persistent[0] / persistent[1], process[0] / process[1]))
        per_check = statistics.median(r[0] for r in rounds)
        per_process = statistics.median(r[1] for r in rounds)
        print(f"reduce: {persistent[1]} checks, minimal: {persistent[2]}")
        print(f"{'per check (s)':<28}{'persistent':>12}{'per-process':>13}{'ratio':>8}")
        print(f"{'':<28}{per_check:>12.3f}{per_process:>13.3f}{per_process / per_check:>8.1f}")
        print("  ratio per round: " + " ".join(f"{p / c:.1f}" for c, p in rounds), flush=True)

        rounds = []
        for i in range(args.rounds):
            plain = run_seconds(vernier, model, [], args.threads, tmp)
            local = run_seconds(vernier, model, ["--mark-all", "--local-errors"], args.threads, tmp)
            rounds.append((plain, local))
        plain = statistics.median(r[0] for r in rounds)
        local = statistics.median(r[1] for r in rounds)
        print(f"{'run --ref --engine-runner (s)':<36}{'plain':>8}{'--mark-all --local-errors':>27}{'ratio':>8}")
        print(f"{'':<36}{plain:>8.2f}{local:>27.2f}{local / plain:>8.2f}")
        print("  ratio per round: " + " ".join(f"{l / p:.2f}" for p, l in rounds), flush=True)


if __name__ == "__main__":
    main()
