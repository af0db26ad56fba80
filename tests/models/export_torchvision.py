#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports a torchvision architecture with random weights to ONNX, with an input and PyTorch's output.

Usage: /usr/bin/python3 export_torchvision.py MODEL OUT_DIR
Writes OUT_DIR/model.onnx, OUT_DIR/input.npz (one array per graph input) and OUT_DIR/torch_output.npz
(PyTorch's outputs, the peer oracle the reference backend is checked against). Weights and input come
from fixed seeds; nothing is downloaded.
"""
import os
import sys

import numpy as np
import torch
import torchvision


def build(name):
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)
    raise SystemExit(f"unknown model {name}")


def main():
    name, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model, shape = build(name)
    model.eval()
    # Random init leaves BatchNorm at identity statistics; give it real ones so the folded
    # Conv+BN weights are not trivially the conv's own.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(1))
    torch.onnx.export(model, (x,), os.path.join(out_dir, "model.onnx"), input_names=["input"],
                      output_names=["logits"], opset_version=13)
    with torch.no_grad():
        y = model(x)
    np.savez(os.path.join(out_dir, "input.npz"), input=x.numpy())
    np.savez(os.path.join(out_dir, "torch_output.npz"), logits=y.numpy())
    print(f"{name}: exported to {out_dir}")


if __name__ == "__main__":
    main()
