#!/usr/bin/python3
"""Exports a GPT-2 checkpoint in Hugging Face layout to ONNX for the benchmark's model case.

The forward is scripts/reference/hf_reference.py's GPT2LMHeadModel (modeling_gpt2.py in plain
torch) with the folder's weights (config.json, model.safetensors in float32); its outputs are the
logits (1, T, vocab) and every layer's attention weights attn_0 .. attn_{L-1} (1, H, T, T); the input
is input_ids (1, T) int64, T a dynamic axis. Opset 14.

    /usr/bin/python3 scripts/export/export_gpt2_onnx.py random-gpt2-small build/bench/gpt2-small
        # config.json and model.safetensors of a random-initialised model of GPT-2 small's shape
        # (12 layers x 12 heads, width 768, MLP 3072, vocab 50257, 1024 positions; 124M
        # parameters, 0.5 GB), then model.onnx beside them
    /usr/bin/python3 scripts/export/export_gpt2_onnx.py onnx MODEL_DIR OUT.onnx

Needs Debian's PyTorch (python3-torch 1.13, run with /usr/bin/python3).
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from hf_reference import GPT2_BASE, GPT2LMHeadModel, randomise, saved_state_dict, write_safetensors  # noqa: E402

GPT2_SMALL = {"n_layer": 12, "n_head": 12, "n_embd": 768, "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
              "bos_token_id": 50256, "eos_token_id": 50256}


def read_safetensors(path):
    """name -> float32 tensor, from a safetensors file of F32 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"{path}: tensor '{name}' is {info['dtype']}; this exporter reads F32 only")
        start, end = info["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[base + start:base + end]), dtype=torch.float32).reshape(info["shape"])
    return out


class WithAttentions(torch.nn.Module):
    """GPT2LMHeadModel returning (logits, attn_0, .., attn_{L-1}) as separate outputs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        logits, attentions = self.model(input_ids)
        return (logits, *attentions)


def load(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    model = GPT2LMHeadModel(config)
    state = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    if "lm_head.weight" not in state and config.get("tie_word_embeddings", True):
        state["lm_head.weight"] = state["transformer.wte.weight"]
    model.load_state_dict(state)
    return model.eval(), config


def export(model_dir, out):
    model, config = load(model_dir)
    L = config["n_layer"]
    ids = torch.zeros(1, min(16, config["n_positions"]), dtype=torch.long)
    outputs = ["logits"] + [f"attn_{l}" for l in range(L)]
    axes = {"input_ids": {1: "T"}, "logits": {1: "T"}}
    axes.update({f"attn_{l}": {2: "T", 3: "T"} for l in range(L)})
    with torch.no_grad():
        torch.onnx.export(WithAttentions(model), (ids,), out, opset_version=14, input_names=["input_ids"],
                          output_names=outputs, dynamic_axes=axes)
    print(f"wrote {out} (torch {torch.__version__}, opset 14, {L} layers)")


def random_gpt2_small(model_dir):
    os.makedirs(model_dir, exist_ok=True)
    config = dict(GPT2_BASE)
    config.update(GPT2_SMALL)
    torch.manual_seed(124)
    model = GPT2LMHeadModel(config)
    # GPT-2's initializer_range: weights N(0, 0.02), LayerNorms near 1 and 0
    randomise(model, 124, 0.02)
    with open(os.path.join(model_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, separators=(",", ":"))
        f.write("\n")
    write_safetensors(os.path.join(model_dir, "model.safetensors"), saved_state_dict(model, {"lm_head.weight"}), "F32")
    print(f"wrote {model_dir}/config.json and model.safetensors ({sum(p.numel() for p in model.parameters())} parameters)")
    export(model_dir, os.path.join(model_dir, "model.onnx"))


def main():
    torch.set_num_threads(1)
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "random-gpt2-small":
        random_gpt2_small(args[1])
    elif len(args) == 3 and args[0] == "onnx":
        export(args[1], args[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
