#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times the reference backend against PyTorch on the fixture architectures, in one run.

Usage: /usr/bin/python3 bench_reference.py VERNIER_BIN [--threads N] [--iterations N] [--rounds N]
                                               [--models a,b,...]
Both sides use the same thread count (default: all cores) and the same exported model. Each round
times both, one after the other, over the iterations (mean of the timed runs, after warm-ups), so
that a change in the machine's load between rounds moves both sides. Prints
    model  vernier_ms  torch_ms  ratio  rounds
rows: the median of the rounds' times on each side, the median of the rounds' ratios (vernier /
torch; lower is better) and their range; then ResNet-18's peak memory in a run of one inference
beside its budget: twice the weights plus the two largest activations.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_torchvision  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "transformer_encoder", "detection_head"]


class TorchTimer:
    """The model built once, warmed up, and timed on demand."""

    def __init__(self, name, threads):
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        self.model, shape = export_torchvision.build(name)
        self.model.eval()
        self.x = torch.rand(shape)
        with torch.no_grad():
            for _ in range(2):
                self.model(self.x)

    def time(self, iterations):
        with torch.no_grad():
            start = time.perf_counter()
            for _ in range(iterations):
                self.model(self.x)
        return (time.perf_counter() - start) * 1000.0 / iterations


def time_vernier(vernier, model_path, threads, iterations):
    out = subprocess.run([vernier, "run", model_path, "--ref", "--threads", str(threads), "--warm-up", "2",
                          "--iterations", str(iterations)], check=True, capture_output=True, text=True).stdout
    ms = float(re.search(r"Average inference time: ([0-9.e+-]+) ms", out).group(1))
    peak = float(re.search(r"Peak memory: ([0-9.]+) MiB", out).group(1))
    return ms, peak


def memory_budget_mib(model_path, input_shape):
    """2 x weights + the two largest activations of one inference, from ONNX shape inference."""
    model = onnx.shape_inference.infer_shapes(onnx.load(model_path))
    weights = sum(np.prod(t.dims, dtype=np.int64) * 4 for t in model.graph.initializer)
    sizes = [int(np.prod(input_shape)) * 4]
    for vi in list(model.graph.value_info) + list(model.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            sizes.append(int(np.prod(dims)) * 4)
    sizes.sort(reverse=True)
    return weights / 2**20, (2 * weights + sizes[0] + sizes[1]) / 2**20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vernier")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    print(f"threads={args.threads} iterations={args.iterations} rounds={args.rounds} torch={torch.__version__}")
    print(f"{'model':<22}{'vernier_ms':>12}{'torch_ms':>12}{'ratio':>8}  rounds")
    resnet_memory = None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            out_dir = os.path.join(tmp, name)
            subprocess.run([sys.executable, export_torchvision.__file__, name, out_dir], check=True,
                           stdout=subprocess.DEVNULL)
            model_path = os.path.join(out_dir, "model.onnx")
            timer = TorchTimer(name, args.threads)
            v_times, t_times = [], []
            try:
                for _ in range(args.rounds):
                    v_times.append(time_vernier(args.vernier, model_path, args.threads, args.iterations)[0])
                    t_times.append(timer.time(args.iterations))
            except subprocess.CalledProcessError as e:
                print(f"{name:<22}{'error':>12}  {e.stderr.strip()}")
                continue
            ratios = [v / t for v, t in zip(v_times, t_times)]
            print(f"{name:<22}{statistics.median(v_times):>12.2f}{statistics.median(t_times):>12.2f}"
                  f"{statistics.median(ratios):>8.2f}  {min(ratios):.2f}-{max(ratios):.2f}", flush=True)
            if name == "resnet18":
                # The timed run holds every iteration's synthetic input; the memory goal is about one
                # inference, so its peak comes from a run of one.
                _, peak = time_vernier(args.vernier, model_path, args.threads, 1)
                weights, budget = memory_budget_mib(model_path, export_torchvision.build(name)[1])
                resnet_memory = (peak, weights, budget)
        if resnet_memory:
            peak, weights, budget = resnet_memory
            print(f"resnet18 peak memory: {peak:.1f} MiB (weights {weights:.1f} MiB; budget 2 x weights + two largest "
                  f"activations = {budget:.1f} MiB; ratio {peak / budget:.2f})")


if __name__ == "__main__":
    main()
