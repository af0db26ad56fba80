#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times the reference backend against PyTorch on the fixture architectures, in one run.

Usage: /usr/bin/python3 bench_reference.py VERNIER_BIN [--threads N] [--iterations N] [--models a,b,...]
Both sides use the same thread count (default: all cores) and the same exported model; each is
warmed up, then timed over the iterations (mean of the timed runs). Prints
    model  vernier_ms  torch_ms  ratio
rows (ratio = vernier / torch; lower is better), then ResNet-18's peak memory in a run of one
inference beside its budget: twice the weights plus the two largest activations.
"""
import argparse
import os
import re
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


def time_torch(name, threads, iterations):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, shape = export_torchvision.build(name)
    model.eval()
    x = torch.rand(shape)
    with torch.no_grad():
        for _ in range(2):
            model(x)
        start = time.perf_counter()
        for _ in range(iterations):
            model(x)
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
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    print(f"threads={args.threads} iterations={args.iterations} torch={torch.__version__}")
    print(f"{'model':<22}{'vernier_ms':>12}{'torch_ms':>12}{'ratio':>8}")
    resnet_memory = None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            out_dir = os.path.join(tmp, name)
            subprocess.run([sys.executable, export_torchvision.__file__, name, out_dir], check=True,
                           stdout=subprocess.DEVNULL)
            model_path = os.path.join(out_dir, "model.onnx")
            try:
                v_ms, peak = time_vernier(args.vernier, model_path, args.threads, args.iterations)
            except subprocess.CalledProcessError as e:
                print(f"{name:<22}{'error':>12}  {e.stderr.strip()}")
                continue
            t_ms = time_torch(name, args.threads, args.iterations)
            print(f"{name:<22}{v_ms:>12.2f}{t_ms:>12.2f}{v_ms / t_ms:>8.2f}", flush=True)
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
