#!/usr/bin/env python3
"""A nanoGPT checkpoint (train.py's ckpt.pt) as a Hugging Face GPT-2 folder the core opens.

  python3 scripts/export/export_nanogpt.py ckpt.pt OUT/ [--meta meta.pkl]

Run it where your PyTorch is (nothing else is needed). It writes OUT/config.json (model_type
gpt2, GPT2LMHeadModel, nanoGPT's sizes, nn.GELU as "gelu", LayerNorm epsilon 1e-5, the LM head
tied to wte), OUT/model.safetensors (float32; nanoGPT's nn.Linear weights [out, in] transposed
into GPT-2's Conv1D layout [in, out]; with bias=False the biases GPT-2 has are written as
zeros, which is what nanoGPT computes), and, for a character-level model, OUT/tokenizer.json
from meta.pkl (its stoi as the vocabulary of a BPE without merges or pre-tokenizer, so each
character is one token). meta.pkl is looked for beside the checkpoint and in
data/<dataset>/ (the checkpoint's config names the dataset) unless --meta is given; without
one, no tokenizer.json is written (a GPT-2-BPE nanoGPT uses GPT-2's own tokenizer.json).

model_args nanoGPT does not have (a fork's options, e.g. use_rmsnorm) are refused by name.
"""
import argparse
import json
import os
import pickle
import struct
import sys

import torch

KNOWN_ARGS = {"n_layer", "n_head", "n_embd", "block_size", "bias", "vocab_size", "dropout"}


def fail(message):
    sys.exit(f"export_nanogpt: {message}")


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt", "source": "nanoGPT"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def convert(checkpoint):
    """(config.json dict, GPT-2 state dict) from a nanoGPT checkpoint."""
    if not isinstance(checkpoint, dict) or "model" not in checkpoint or "model_args" not in checkpoint:
        fail("not a nanoGPT checkpoint: expected a dict with 'model' and 'model_args' (train.py's ckpt.pt)")
    args = checkpoint["model_args"]
    unknown = sorted(set(args) - KNOWN_ARGS)
    if unknown:
        fail(f"model_args {', '.join(unknown)}: not nanoGPT's (a fork's options are not supported)")
    for key in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size"):
        if not isinstance(args.get(key), int):
            fail(f"model_args {key} is missing or not an integer")
    # torch.compile's wrapper prefixes every name with _orig_mod. (sample.py strips it too)
    sd = {k[len("_orig_mod."):] if k.startswith("_orig_mod.") else k: v for k, v in checkpoint["model"].items()}
    E, L = args["n_embd"], args["n_layer"]
    bias = bool(args.get("bias", True))

    def take(name, shape):
        if name not in sd:
            fail(f"tensor {name} is missing from the checkpoint")
        t = sd.pop(name)
        if list(t.shape) != list(shape):
            fail(f"tensor {name} has shape {list(t.shape)}, expected {list(shape)}")
        return t.to(torch.float32)

    def maybe_bias(name, n):
        return take(name, [n]) if bias else torch.zeros(n)

    out = {}
    out["transformer.wte.weight"] = take("transformer.wte.weight", [args["vocab_size"], E])
    out["transformer.wpe.weight"] = take("transformer.wpe.weight", [args["block_size"], E])
    for i in range(L):
        p = f"transformer.h.{i}."
        for ln in ("ln_1", "ln_2"):
            out[p + ln + ".weight"] = take(p + ln + ".weight", [E])
            out[p + ln + ".bias"] = maybe_bias(p + ln + ".bias", E)
        # nn.Linear [out, in] -> Conv1D [in, out]
        for name, n_out, n_in in (("attn.c_attn", 3 * E, E), ("attn.c_proj", E, E), ("mlp.c_fc", 4 * E, E), ("mlp.c_proj", E, 4 * E)):
            out[p + name + ".weight"] = take(p + name + ".weight", [n_out, n_in]).t().contiguous()
            out[p + name + ".bias"] = maybe_bias(p + name + ".bias", n_out)
        sd.pop(p + "attn.bias", None)  # the causal mask buffer (no flash attention)
    out["transformer.ln_f.weight"] = take("transformer.ln_f.weight", [E])
    out["transformer.ln_f.bias"] = maybe_bias("transformer.ln_f.bias", E)
    lm_head = take("lm_head.weight", [args["vocab_size"], E])
    if not torch.equal(lm_head, out["transformer.wte.weight"]):
        fail("lm_head.weight differs from transformer.wte.weight: nanoGPT ties them, this checkpoint does not")
    if sd:
        fail(f"tensors the model does not have: {', '.join(sorted(sd))}")
    config = {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu",
        "n_layer": L, "n_head": args["n_head"], "n_embd": E, "n_inner": 4 * E, "n_positions": args["block_size"],
        "n_ctx": args["block_size"], "vocab_size": args["vocab_size"], "layer_norm_epsilon": 1e-5,
        "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False,
        "tie_word_embeddings": True, "torch_dtype": "float32", "nanogpt_bias": bias,
    }
    return config, out


def char_tokenizer(meta):
    """meta.pkl's stoi as a tokenizer.json: BPE, no merges, no pre-tokenizer, one id a character."""
    if not isinstance(meta, dict) or not isinstance(meta.get("stoi"), dict):
        fail("meta.pkl has no 'stoi' mapping (a character-level prepare.py writes one)")
    vocab = {}
    for ch, i in meta["stoi"].items():
        if not isinstance(ch, str) or len(ch) != 1 or not isinstance(i, int):
            fail(f"meta.pkl stoi entry {ch!r}: {i!r} is not one character to an integer")
        vocab[ch] = i
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": []},
    }


def find_meta(ckpt_path, checkpoint, explicit):
    if explicit:
        return explicit
    candidates = [os.path.join(os.path.dirname(os.path.abspath(ckpt_path)), "meta.pkl")]
    dataset = (checkpoint.get("config") or {}).get("dataset") if isinstance(checkpoint.get("config"), dict) else None
    if dataset:
        candidates.append(os.path.join("data", dataset, "meta.pkl"))
    return next((c for c in candidates if os.path.exists(c)), None)


def export(ckpt_path, out_dir, meta_path=None):
    checkpoint = torch.load(ckpt_path, map_location="cpu")
    config, tensors = convert(checkpoint)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors)
    meta_path = find_meta(ckpt_path, checkpoint, meta_path)
    if meta_path:
        with open(meta_path, "rb") as f:
            tokenizer = char_tokenizer(pickle.load(f))
        if len(tokenizer["model"]["vocab"]) > config["vocab_size"]:
            fail(f"meta.pkl has {len(tokenizer['model']['vocab'])} characters, more than the model's vocab_size {config['vocab_size']}")
        with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer, f, ensure_ascii=False)
    return config, meta_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("out")
    parser.add_argument("--meta", help="meta.pkl of a character-level dataset")
    a = parser.parse_args()
    config, meta = export(a.checkpoint, a.out, a.meta)
    print(f"{a.out}: {config['n_layer']} layers x {config['n_head']} heads, width {config['n_embd']}, "
          f"vocab {config['vocab_size']}, block {config['n_positions']}; "
          + (f"tokenizer.json from {meta}" if meta else "no meta.pkl: no tokenizer.json"))


if __name__ == "__main__":
    main()
