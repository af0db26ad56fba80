#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the architectures of bench_vs_ort.py with random weights (Debian's torch 1.13 and torchvision 0.14).

Usage: /usr/bin/python3 export_zoo.py NAME OUT_DIR
Writes OUT_DIR/model.onnx (opset 17), OUT_DIR/input.npz and, for Node.js, OUT_DIR/inputs.json with one
raw little-endian file per input (OUT_DIR/<input>.bin). Weights and inputs come from fixed seeds;
nothing is downloaded. Exits 3, saying why, when torch's exporter cannot export the model.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torchvision

class BertBase(torch.nn.Module):
    """BERT-base-like encoder: token and position embeddings, LayerNorm, 12 post-norm layers (768, 12 heads,
    3072, GELU) over 128 token ids."""

    def __init__(self, vocab=30522, tokens=128, d=768):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.norm = torch.nn.LayerNorm(d)
        layer = torch.nn.TransformerEncoderLayer(d, 12, 3072, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)

    def forward(self, ids):
        return self.encoder(self.norm(self.tokens(ids) + self.positions))


class WhisperEncoder(torch.nn.Module):
    """Whisper-tiny-like audio encoder: two Conv1d + GELU over 80 mel bins x 3000 frames (the second with
    stride 2), sinusoidal positions, 4 pre-norm layers (384, 6 heads, 1536, GELU), final LayerNorm."""

    def __init__(self, d=384, frames=3000):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(80, d, 3, padding=1)
        self.conv2 = torch.nn.Conv1d(d, d, 3, stride=2, padding=1)
        n = frames // 2
        scale = torch.exp(-math.log(10000) * torch.arange(d // 2) / (d // 2 - 1))
        angle = torch.arange(n)[:, None] * scale[None, :]
        self.register_buffer("positions", torch.cat([angle.sin(), angle.cos()], dim=1)[None])
        layer = torch.nn.TransformerEncoderLayer(d, 6, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                                 norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, mel):
        x = torch.nn.functional.gelu(self.conv1(mel))
        x = torch.nn.functional.gelu(self.conv2(x)).permute(0, 2, 1)
        return self.norm(self.encoder(x + self.positions))


class BiLstm(torch.nn.Module):
    """Two bidirectional LSTM layers (hidden 512) over 64 steps of 256 features, batch 1."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(256, 512, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


class Segmentation(torch.nn.Module):
    """A torchvision segmentation model without its dict output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(name):
    m = torchvision.models
    image = (1, 3, 224, 224)
    if name == "resnet50":
        return m.resnet50(weights=None), image
    if name == "mobilenet_v3_large":
        return m.mobilenet_v3_large(weights=None), image
    if name == "convnext_tiny":
        return m.convnext_tiny(weights=None), image
    if name == "swin_t":
        return m.swin_t(weights=None), image
    if name == "densenet121":
        return m.densenet121(weights=None), image
    if name == "efficientnet_v2_s":
        return m.efficientnet_v2_s(weights=None), image
    if name == "regnet_y_400mf":
        return m.regnet_y_400mf(weights=None), image
    if name == "inception_v3":
        return m.inception_v3(weights=None, aux_logits=False, init_weights=True), (1, 3, 299, 299)
    if name == "shufflenet_v2":
        return m.shufflenet_v2_x1_0(weights=None), image
    if name == "deeplabv3_mobilenet":
        return Segmentation(m.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None)), \
            (1, 3, 320, 320)
    if name == "vit_b_16":
        return m.vit_b_16(weights=None), image
    if name == "bert_base":
        return BertBase(), (1, 128)
    if name == "whisper_encoder":
        return WhisperEncoder(), (1, 80, 3000)
    if name == "bilstm":
        return BiLstm(), (1, 64, 256)
    raise SystemExit(f"unknown model {name}")


def main():
    name, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model, shape = build(name)
    model.eval()
    generator = torch.Generator().manual_seed(1)
    if name == "bert_base":
        x = torch.randint(0, 30522, shape, generator=generator)
    else:
        x = torch.rand(shape, generator=generator)
    path = os.path.join(out_dir, "model.onnx")
    try:
        # Outside no_grad: there, torch 1.13's eval-mode attention takes fused fast paths
        # (_transformer_encoder_layer_fwd, _native_multi_head_attention) that it cannot export.
        # torch 2.x's default exporter is dynamo's; the zoo uses the TorchScript one on every torch.
        legacy = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"], opset_version=17,
                          **legacy)
    except Exception as e:  # the exporter's own errors, of many types
        print(f"{name}: torch {torch.__version__}'s exporter cannot export it: {str(e).splitlines()[0]}")
        sys.exit(3)
    array = x.numpy()
    np.savez(os.path.join(out_dir, "input.npz"), input=array)
    array.tofile(os.path.join(out_dir, "input.bin"))
    with open(os.path.join(out_dir, "inputs.json"), "w") as f:
        json.dump([{"name": "input", "dtype": str(array.dtype), "shape": list(array.shape), "file": "input.bin"}], f)
    print(f"{name}: exported to {out_dir}")


if __name__ == "__main__":
    main()
