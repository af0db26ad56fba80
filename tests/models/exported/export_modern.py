#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the fixtures of this folder with PyTorch 2.x's exporter (torch.onnx.export(dynamo=True)).

Usage: python3 export_modern.py OUT_DIR      (PyTorch >= 2.9, transformers, onnx, onnxruntime)
Writes OUT_DIR/NAME/{model.onnx, input.npz, torch_output.npz, ort_output.npz} for each
configuration below: small Llama-, GPT-2-, BERT-, T5-encoder-, ViT- and Whisper-encoder-style
transformers with random weights (transformers' configurations), a ConvNeXt-style CNN and a
bidirectional LSTM, at opset 18 (llama_opset23 at 23, which writes Attention and RMSNormalization).
ort_output.npz is ONNX Runtime's result on the same input. Debian has neither PyTorch 2.x nor
transformers, so the files were made on a machine that has them (PyTorch 2.11, transformers 5.17,
onnx 1.23.1, onnxruntime 1.30) and committed; the tests only read them.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers as tf


def save_case(out_dir, name, model, args, input_names, opset):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    model.eval()
    with torch.no_grad():
        ref = model(*args)
    ref = (ref,) if isinstance(ref, torch.Tensor) else ref
    torch.onnx.export(model, tuple(args), path, input_names=input_names, opset_version=opset, dynamo=True,
                      external_data=False)
    m = onnx.load(path)
    out_names = [o.name for o in m.graph.output]
    graph_inputs = {i.name for i in m.graph.input}
    feeds = {n: a.numpy() for n, a in zip(input_names, args) if n in graph_inputs}
    np.savez(os.path.join(d, "input.npz"), **feeds)
    np.savez(os.path.join(d, "torch_output.npz"), **{n: r.detach().numpy() for n, r in zip(out_names, ref)})
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    np.savez(os.path.join(d, "ort_output.npz"), **dict(zip(out_names, session.run(None, feeds))))


class LogitsOnly(torch.nn.Module):
    """A transformers model returning its first output only, with the KV cache off."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, x):
        kwargs = {self.key: x, "return_dict": False}
        if "use_cache" in self.model.forward.__code__.co_varnames:
            kwargs["use_cache"] = False
        return self.model(**kwargs)[0]


class SmallConvNeXt(torch.nn.Module):
    """ConvNeXt-style blocks: depthwise 7x7, LayerNorm over channels, GELU, global mean."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 32, 4, stride=4)
        self.blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict(dict(dw=torch.nn.Conv2d(32, 32, 7, padding=3, groups=32), ln=torch.nn.LayerNorm(32),
                                     pw1=torch.nn.Linear(32, 64), pw2=torch.nn.Linear(64, 32))) for _ in range(2))
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            y = b["dw"](x).permute(0, 2, 3, 1)
            y = b["pw2"](torch.nn.functional.gelu(b["pw1"](b["ln"](y))))
            x = x + y.permute(0, 3, 1, 2)
        return self.head(x.mean(dim=(2, 3)))


class SmallLSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.fc(self.lstm(x)[0])


def main(out_dir):
    small = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
    ids = lambda: torch.randint(0, 256, (1, 16), dtype=torch.int64)  # noqa: E731
    llama = dict(vocab_size=256, num_key_value_heads=2, max_position_embeddings=64, **small)
    for name, cfg, cls, opset in [
        ("llama_opset18", tf.LlamaConfig(**llama), tf.LlamaForCausalLM, 18),
        ("llama_opset23", tf.LlamaConfig(**llama), tf.LlamaForCausalLM, 23),
        ("gpt2_opset18", tf.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=64),
         tf.GPT2LMHeadModel, 18),
        ("bert_opset18", tf.BertConfig(vocab_size=256, max_position_embeddings=64, **small), tf.BertModel, 18),
        ("t5enc_opset18", tf.T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                                      attn_implementation="eager"), tf.T5EncoderModel, 18),
    ]:
        torch.manual_seed(1)
        save_case(out_dir, name, LogitsOnly(cls(cfg).eval(), "input_ids"), [ids()], ["input_ids"], opset)
    torch.manual_seed(2)
    vit = tf.ViTModel(tf.ViTConfig(image_size=32, patch_size=8, **small)).eval()
    save_case(out_dir, "vit_opset18", LogitsOnly(vit, "pixel_values"), [torch.randn(1, 3, 32, 32)], ["pixel_values"],
              18)
    torch.manual_seed(3)
    whisper = tf.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                               decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128, num_mel_bins=16,
                               max_source_positions=32, vocab_size=256, pad_token_id=0, bos_token_id=1,
                               eos_token_id=2, decoder_start_token_id=1)
    encoder = tf.WhisperModel(whisper).get_encoder().eval()
    save_case(out_dir, "whisper_enc_opset18", LogitsOnly(encoder, "input_features"), [torch.randn(1, 16, 64)],
              ["input_features"], 18)
    torch.manual_seed(5)
    save_case(out_dir, "convnext_small_opset18", SmallConvNeXt(), [torch.randn(1, 3, 64, 64)], ["input"], 18)
    save_case(out_dir, "bilstm_opset18", SmallLSTM(), [torch.randn(1, 12, 16)], ["input"], 18)


if __name__ == "__main__":
    main(sys.argv[1])
