#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Vernier's reference and fp32 engine beside ONNX Runtime on a zoo of real architectures (issue 24).

Usage: /usr/bin/python3 bench_vs_ort.py VERNIER_BIN [--zoo DIR] [--threads 1,16] [--models a,b]
                                        [--runs N] [--rounds R] [--warm-up N] [--ort-modules DIR]
1. Exports each model of --models (export_zoo.py: random weights, fixed seeds, Debian's torch 1.13)
   into --zoo, once: a model already there is reused. A model torch cannot export is reported and
   left out.
2. For each thread count of --threads, times on the same input, warm (--warm-up untimed runs first):
     ref     `vernier run MODEL --ref --engine --threads T` (one process; each backend's per-run
     engine  times come from its --save-outputs RunResults), the engine built in fp32;
     ort     onnxruntime-node (ort_time.js), intra-op threads T, inter-op 1, all optimizations;
             with --ort python, Python's onnxruntime with the same settings (for machines that
             have it and no Node.js).
   Each time is the median of --runs runs. With --rounds R every model's timings (all sides) are
   taken R times, one round after the other, and each side keeps its fastest round: on a machine
   whose cores are shared with others (a cloud VM's SMT siblings), a burst of someone else's work
   slows whichever side runs then, by 30% and more; the fastest of a few interleaved rounds is what
   each side does when left alone.
   With --precisions fp16,int8 each of those engine builds is timed too (one `vernier run MODEL
   --engine --fp16` per precision), and its time over the fp32 engine's is printed.
3. Prints per model the times and ref/ort and engine/ref, the medians of the ratios over the
   models, and, when several thread counts are given, which models get slower with more threads
   (median at the most threads above that at the fewest by more than 5%).
Vernier's thread count is its --threads flag (0 or absent: every core). Vernier's threads are
libgomp's, which spin between parallel regions unless OMP_WAIT_POLICY=passive is set in the
environment (it is passed on): on a machine whose cores other programs also use, spinning threads
make Vernier many times slower at more threads (see the README's performance section).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# export_zoo.py's models, in the order of issue 24.
NAMES = ["resnet50", "mobilenet_v3_large", "convnext_tiny", "swin_t", "densenet121", "efficientnet_v2_s",
         "regnet_y_400mf", "inception_v3", "shufflenet_v2", "deeplabv3_mobilenet", "vit_b_16", "bert_base",
         "whisper_encoder", "bilstm"]


def export(zoo, name):
    out_dir = os.path.join(zoo, name)
    if os.path.exists(os.path.join(out_dir, "inputs.json")):
        return out_dir
    p = subprocess.run([sys.executable, os.path.join(HERE, "export_zoo.py"), name, out_dir], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print(f"[W] {name}: left out: {(p.stdout + p.stderr).strip().splitlines()[-1]}", flush=True)
        return None
    return out_dir


def time_vernier(vernier, model_dir, threads, runs, warm_up, backends=("--ref", "--engine")):
    """Median ms per run of each backend of one `vernier run` (default: the reference and the fp32
    engine; `--engine --fp16` and the like time one engine build)."""
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "runs.json")
        inputs = os.path.join(model_dir, "input.npz")
        p = subprocess.run([vernier, "run", os.path.join(model_dir, "model.onnx")] + list(backends) +
                           ["--threads", str(threads), "--warm-up", str(warm_up), "--load-inputs"] + [inputs] * runs +
                           ["--save-outputs", saved, "--atol", "1e30", "--rtol", "1e30"], capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise RuntimeError(f"vernier run failed ({p.returncode}):\n{p.stdout[-3000:]}{p.stderr}")
        with open(saved) as f:
            results = json.load(f)["lst"]
    return [statistics.median(it["runtime"] * 1000.0 for it in iterations) for _, iterations in results]


# Python's onnxruntime, in a process of its own like ort_time.js (same settings, same output).
ORT_PYTHON = r"""
import json, os, sys, time
import numpy as np
import onnxruntime as ort
model, inputs_json, threads, warm_up, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
feeds = {}
for i in json.load(open(inputs_json)):
    data = np.fromfile(os.path.join(os.path.dirname(inputs_json), i["file"]), dtype=i["dtype"])
    feeds[i["name"]] = data.reshape(i["shape"])
o = ort.SessionOptions()
o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(model, o, providers=["CPUExecutionProvider"])
for _ in range(warm_up):
    s.run(None, feeds)
ms = []
for _ in range(runs):
    t = time.perf_counter()
    s.run(None, feeds)
    ms.append((time.perf_counter() - t) * 1000.0)
print(json.dumps({"ms": ms}))
"""


def time_ort(node, modules, model_dir, threads, runs, warm_up):
    if node == "python":
        p = subprocess.run([sys.executable, "-c", ORT_PYTHON, os.path.join(model_dir, "model.onnx"),
                            os.path.join(model_dir, "inputs.json"), str(threads), str(warm_up), str(runs)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"onnxruntime (Python) failed:\n{p.stderr}")
        return statistics.median(json.loads(p.stdout)["ms"])
    p = subprocess.run([node, os.path.join(HERE, "ort_time.js"), modules, os.path.join(model_dir, "model.onnx"),
                        os.path.join(model_dir, "inputs.json"), str(threads), str(warm_up), str(runs)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"ort_time.js failed:\n{p.stderr}")
    return statistics.median(json.loads(p.stdout)["ms"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("--zoo", default=os.path.join(tempfile.gettempdir(), "vernier_bench_zoo"))
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}")
    parser.add_argument("--models", default=",".join(NAMES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of every model's timings; each side keeps its fastest round's median")
    parser.add_argument("--warm-up", type=int, default=2)
    parser.add_argument("--ort-modules", default=os.path.join(HERE, "..", "..", ".deps", "node", "node_modules"))
    parser.add_argument("--node", default="node")
    parser.add_argument("--ort", choices=["node", "python"], default="node",
                        help="onnxruntime-node (the default) or Python's onnxruntime")
    parser.add_argument("--precisions", default="",
                        help="engine precisions timed besides fp32, e.g. fp16,int8 (their ratio to fp32 is printed)")
    args = parser.parse_args()
    vernier = os.path.abspath(args.vernier)
    modules = os.path.abspath(args.ort_modules)
    threads = sorted({int(t) for t in args.threads.split(",")})
    names = args.models.split(",")
    for name in names:
        if name not in NAMES:
            raise SystemExit(f"unknown model {name}; one of {', '.join(NAMES)}")
    print(f"zoo={args.zoo} threads={threads} runs={args.runs} rounds={args.rounds} warm_up={args.warm_up} cores={os.cpu_count()} "
          f"load={os.getloadavg()[0]:.1f} OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}", flush=True)
    dirs = {name: export(args.zoo, name) for name in names}
    names = [n for n in names if dirs[n]]
    precisions = [p for p in args.precisions.split(",") if p and p != "fp32"]
    for p in precisions:
        if p not in ("fp16", "bf16", "tf32", "int8"):
            raise SystemExit(f"unknown precision {p}; one of fp16, bf16, tf32, int8")
    times = {}  # (model, threads) -> (ref, engine, ort, *engine at each of precisions)
    for t in threads:
        print(f"\nthreads={t} (median ms of {args.runs} warm runs" +
              (f", fastest of {args.rounds} rounds)" if args.rounds > 1 else ")"))
        print(f"{'model':<22}{'ref':>10}{'engine':>10}{'ort':>10}{'ref/ort':>9}{'engine/ref':>11}" +
              "".join(f"{p + '/fp32':>11}" for p in precisions), flush=True)
        for name in names:
            best = None
            try:
                for _ in range(args.rounds):
                    ref, engine = time_vernier(vernier, dirs[name], t, args.runs, args.warm_up)
                    ort = time_ort("python" if args.ort == "python" else args.node, modules, dirs[name], t, args.runs,
                                   args.warm_up)
                    others = [time_vernier(vernier, dirs[name], t, args.runs, args.warm_up, ("--engine", "--" + p))[0]
                              for p in precisions]
                    taken = (ref, engine, ort, *others)
                    best = taken if best is None else tuple(min(a, b) for a, b in zip(best, taken))
            except RuntimeError as e:
                print(f"{name:<22}failed: {' | '.join(str(e).strip().splitlines()[-2:])}", flush=True)
                continue
            times[(name, t)] = best
            ref, engine, ort, *others = best
            print(f"{name:<22}{ref:>10.2f}{engine:>10.2f}{ort:>10.2f}{ref / ort:>9.2f}{engine / ref:>11.2f}" +
                  "".join(f"{o / engine:>11.2f}" for o in others), flush=True)
        rows = [times[(n, t)] for n in names if (n, t) in times]
        if not rows:
            continue
        print(f"{'median':<22}{'':>30}{statistics.median(r[0] / r[2] for r in rows):>9.2f}"
              f"{statistics.median(r[1] / r[0] for r in rows):>11.2f}" +
              "".join(f"{statistics.median(r[3 + i] / r[1] for r in rows):>11.2f}" for i in range(len(precisions))),
              flush=True)
    if len(threads) > 1:
        lo, hi = threads[0], threads[-1]
        print(f"\nslower at {hi} threads than at {lo} (by more than 5%):")
        for i, runner in enumerate(("ref", "engine", "ort")):
            both = [n for n in names if (n, hi) in times and (n, lo) in times]
            slower = [f"{n} ({times[(n, hi)][i] / times[(n, lo)][i]:.2f}x)" for n in both
                      if times[(n, hi)][i] > 1.05 * times[(n, lo)][i]]
            print(f"  {runner:<7}{', '.join(slower) if slower else 'none'}")


if __name__ == "__main__":
    main()
