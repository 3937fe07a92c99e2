#!/usr/bin/python3
"""Exports a Llama-layout checkpoint (Llama, Mistral, Qwen2) in Hugging Face layout to ONNX for the
benchmark's model cases.

The forward is scripts/reference/llama_reference.py's LlamaForCausalLM (modeling_llama.py in plain
torch) with the folder's weights (config.json, model.safetensors in float32); its outputs are the
logits (1, T, vocab) and every layer's attention weights attn_0 .. attn_{L-1} (1, H, T, T); the
input is input_ids (1, T) int64, T a dynamic axis. Opset 14.

    node scripts/export/random_checkpoint.js smollm2-135m F32 build/bench/smollm2-135m
    /usr/bin/python3 scripts/export/export_llama_onnx.py build/bench/smollm2-135m build/bench/smollm2-135m/model.onnx

Needs Debian's PyTorch (python3-torch 1.13, run with /usr/bin/python3).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from llama_reference import LlamaForCausalLM  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_gpt2_onnx import read_safetensors  # noqa: E402


class WithAttentions(torch.nn.Module):
    """LlamaForCausalLM returning (logits, attn_0, .., attn_{L-1}) as separate outputs."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        logits, attentions, _ = self.model(input_ids)
        return (logits, *attentions)


def export(model_dir, out):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    model = LlamaForCausalLM(config)
    state = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    if "lm_head.weight" not in state and config.get("tie_word_embeddings", False):
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state)
    model.eval()
    L = config["num_hidden_layers"]
    ids = torch.zeros(1, 16, dtype=torch.long)
    outputs = ["logits"] + [f"attn_{l}" for l in range(L)]
    axes = {"input_ids": {1: "T"}, "logits": {1: "T"}}
    axes.update({f"attn_{l}": {2: "T", 3: "T"} for l in range(L)})
    with torch.no_grad():
        torch.onnx.export(WithAttentions(model), (ids,), out, opset_version=14, input_names=["input_ids"],
                          output_names=outputs, dynamic_axes=axes)
    print(f"wrote {out} (torch {torch.__version__}, opset 14, {L} layers)")


def main():
    torch.set_num_threads(1)
    args = sys.argv[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    export(args[0], args[1])


if __name__ == "__main__":
    main()
