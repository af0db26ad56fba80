#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports a torchvision architecture with random weights to ONNX, with an input and PyTorch's output.

Usage: /usr/bin/python3 export_torchvision.py MODEL OUT_DIR
Writes OUT_DIR/model.onnx, OUT_DIR/input.npz (one array per graph input) and OUT_DIR/torch_output.npz
(PyTorch's outputs, the peer oracle the reference backend is checked against). Weights and input come
from fixed seeds; nothing is downloaded.

resnet18_data_bn is ResNet-18 at 112x112 whose BatchNorm statistics come from data, as training
leaves them: forward passes in train mode over normalized images (standard normal values), so
every layer's pre-activations are normalized per channel instead of growing block by block.
Its input is such an image.
"""
import os
import sys

import numpy as np
import torch
import torchvision


class TransformerEncoder(torch.nn.Module):
    """torch.nn.TransformerEncoder, 4 layers, d_model 256, over a (batch, tokens, features) input."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class DetectionHead(torch.nn.Module):
    """A small FPN-style detector head: two feature levels, nearest Resize of the coarse one,
    Concat with the fine one, then box and class convolutions."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU())
        self.down = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.ReLU())
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = torch.nn.Conv2d(48, 32, 3, padding=1)
        self.boxes = torch.nn.Conv2d(32, 4 * 3, 1)
        self.scores = torch.nn.Conv2d(32, 5 * 3, 1)

    def forward(self, x):
        fine = self.stem(x)
        coarse = self.down(fine)
        fused = torch.relu(self.fuse(torch.cat([fine, self.up(coarse)], dim=1)))
        return self.boxes(fused), torch.sigmoid(self.scores(fused))


def build(name):
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)
    if name == "resnet18_data_bn":
        return torchvision.models.resnet18(weights=None), (1, 3, 112, 112)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)
    if name == "squeezenet1_1":
        return torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)
    if name == "efficientnet_b0":
        return torchvision.models.efficientnet_b0(weights=None), (1, 3, 224, 224)
    if name == "transformer_encoder":
        return TransformerEncoder(), (1, 64, 256)
    if name == "detection_head":
        return DetectionHead(), (1, 3, 128, 128)
    raise SystemExit(f"unknown model {name}")


def fit_batchnorm(model, shape):
    """Replaces the BatchNorm running statistics by those of 32 normalized images (train-mode
    passes, cumulative averages), then puts the model back in eval mode."""
    batchnorms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for m in batchnorms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn((8,) + shape[1:], generator=generator))
    model.eval()


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
    if name == "resnet18_data_bn":
        fit_batchnorm(model, shape)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    else:
        x = torch.rand(shape, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x)
    outputs = list(y) if isinstance(y, tuple) else [y]
    output_names = ["logits"] if len(outputs) == 1 else [f"output{i}" for i in range(len(outputs))]
    torch.onnx.export(model, (x,), os.path.join(out_dir, "model.onnx"), input_names=["input"],
                      output_names=output_names, opset_version=13)
    np.savez(os.path.join(out_dir, "input.npz"), input=x.numpy())
    np.savez(os.path.join(out_dir, "torch_output.npz"), **{n: o.numpy() for n, o in zip(output_names, outputs)})
    print(f"{name}: exported to {out_dir}")


if __name__ == "__main__":
    main()
