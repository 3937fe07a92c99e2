#!/usr/bin/python3
"""Export the weights of a torch.nn.MultiheadAttention to the two files the JS API loads:

  NAME.safetensors   the safetensors format, written here by hand (8-byte little-endian header
                     length, JSON header, row-major little-endian data), F32, F16 or BF16
  NAME.json          the golden-case format of tests/golden: {"config", "state_dict"}

and, with --reference, NAME.reference.json: an input and PyTorch's output and attention weights
for it, computed from the weights exactly as stored (F16/BF16 values rounded first), so that a
test can check that the file reproduces PyTorch.

Sources of the module:
  (default)                a fresh nn.MultiheadAttention(E, H) initialised from --seed
  --transformer-layer      the self-attention of a fresh nn.TransformerEncoderLayer(E, H), whose
                           names are kept under their model prefix (layers.0.self_attn.…), as in
                           a model's state_dict: "one attention layer of a model"
  --checkpoint FILE.pt     a saved state_dict (torch.save) holding one or more attention layers;
                           --prefix picks one (e.g. encoder.layers.3.self_attn.)

Runs with Debian's PyTorch: /usr/bin/python3 scripts/export/export_weights.py --help
The safetensors pip package is not needed.
"""

import argparse
import json
import os
import struct
import sys

import torch

PARAMETER_NAMES = ["in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                   "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"]

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def write_safetensors(path, tensors, dtype, metadata):
    """tensors: {name: float tensor}; every tensor stored as `dtype` ("F32" | "F16" | "BF16")."""
    torch_dtype = DTYPES[dtype]
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, tensor in tensors.items():
        t = tensor.detach().to(torch_dtype).contiguous().cpu()
        if torch_dtype == torch.bfloat16:
            # numpy has no bfloat16: take the 16-bit patterns
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        elif torch_dtype == torch.float16:
            raw = t.numpy().astype("<f2").tobytes()
        else:
            raw = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * ((8 - (8 + len(header_bytes)) % 8) % 8)  # data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for raw in blobs:
            f.write(raw)


def tensor_json(t):
    t = t.detach().to(torch.float32).contiguous().cpu()
    return {"shape": list(t.shape), "dtype": "float32", "data": [float(v) for v in t.reshape(-1).tolist()]}


def module_config(m):
    return {
        "embed_dim": m.embed_dim,
        "num_heads": m.num_heads,
        "num_kv_heads": m.num_heads,
        "kdim": m.kdim,
        "vdim": m.vdim,
        "bias": m.in_proj_bias is not None,
        "add_bias_kv": m.bias_k is not None,
        "add_zero_attn": m.add_zero_attn,
        "batch_first": m.batch_first,
    }


def attention_from_state_dict(state, prefix, num_heads, batch_first):
    """Rebuild an nn.MultiheadAttention from the tensors under `prefix` of a model's state_dict."""
    names = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix) and k[len(prefix):] in PARAMETER_NAMES}
    if "out_proj.weight" not in names:
        layers = sorted({k[: -len("out_proj.weight")] for k in state if k.endswith("out_proj.weight")})
        sys.exit(f"export_weights: no '{prefix}out_proj.weight' in the checkpoint; attention layers found: {layers}")
    E = names["out_proj.weight"].shape[0]
    kdim = names["k_proj_weight"].shape[1] if "k_proj_weight" in names else E
    vdim = names["v_proj_weight"].shape[1] if "v_proj_weight" in names else E
    m = torch.nn.MultiheadAttention(E, num_heads, bias="in_proj_bias" in names, add_bias_kv="bias_k" in names,
                                    kdim=kdim, vdim=vdim, batch_first=batch_first)
    m.load_state_dict(names, strict=True)
    return m, names


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output path without extension, e.g. tests/js/fixtures/mha_e16_h4")
    p.add_argument("--embed-dim", type=int, default=16)
    p.add_argument("--num-heads", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="F32", help="dtype stored in the .safetensors file")
    p.add_argument("--add-bias-kv", action="store_true")
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--batch-first", action="store_true")
    p.add_argument("--transformer-layer", action="store_true", help="export the self_attn of an nn.TransformerEncoderLayer, names prefixed layers.0.self_attn.")
    p.add_argument("--checkpoint", help="a torch.save'd state_dict to take the layer from")
    p.add_argument("--prefix", default="", help="with --checkpoint: the layer's name prefix, e.g. encoder.layers.0.self_attn.")
    p.add_argument("--reference", action="store_true", help="also write NAME.reference.json: an input and PyTorch's output for it")
    p.add_argument("--seq-len", type=int, default=7, help="length of the reference input")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    prefix = ""
    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location="cpu")
        if not isinstance(state, dict):
            sys.exit("export_weights: the checkpoint must hold a state_dict (a dict of tensors)")
        m, _ = attention_from_state_dict(state, args.prefix, args.num_heads, args.batch_first)
        prefix = args.prefix
    elif args.transformer_layer:
        layer = torch.nn.TransformerEncoderLayer(args.embed_dim, args.num_heads, dim_feedforward=4 * args.embed_dim,
                                                 dropout=0.0, batch_first=args.batch_first)
        with torch.no_grad():  # PyTorch zeroes these biases at initialisation; give them values so that they are tested
            layer.self_attn.in_proj_bias.uniform_(-0.5, 0.5)
            layer.self_attn.out_proj.bias.uniform_(-0.5, 0.5)
        m = layer.self_attn
        prefix = "layers.0.self_attn."
    else:
        m = torch.nn.MultiheadAttention(args.embed_dim, args.num_heads, bias=not args.no_bias,
                                        add_bias_kv=args.add_bias_kv, batch_first=args.batch_first)
        with torch.no_grad():
            if m.in_proj_bias is not None:
                m.in_proj_bias.uniform_(-0.5, 0.5)
                m.out_proj.bias.uniform_(-0.5, 0.5)
    m.eval()

    # The weights as stored: F16/BF16 files hold rounded values, and the reference uses those.
    with torch.no_grad():
        for param in m.parameters():
            param.copy_(param.to(DTYPES[args.dtype]).to(torch.float32))

    state = {name: t for name, t in m.state_dict().items() if name in PARAMETER_NAMES}
    config = module_config(m)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    metadata = {"format": "pt", "config": json.dumps(config), "source": f"torch {torch.__version__} nn.MultiheadAttention"}
    write_safetensors(args.out + ".safetensors", {prefix + k: v for k, v in state.items()}, args.dtype, metadata)
    with open(args.out + ".json", "w") as f:
        json.dump({"name": os.path.basename(args.out), "config": config,
                   "state_dict": {prefix + k: tensor_json(v) for k, v in state.items()}}, f)
        f.write("\n")
    written = [args.out + ".safetensors", args.out + ".json"]

    if args.reference:
        g = torch.Generator().manual_seed(args.seed + 1)
        L, E = args.seq_len, m.embed_dim
        x = torch.randn((1, L, E) if m.batch_first else (L, 1, E), generator=g)
        with torch.no_grad():
            out, weights = m(x, x, x, need_weights=True, average_attn_weights=False)
        ref = {
            "description": "self-attention of the exported weights on `query` (key = value = query); "
                           "weights per head (N, H, L, S); torch " + torch.__version__,
            "prefix": prefix,
            "dtype": args.dtype,
            "config": config,
            "inputs": {"query": tensor_json(x)},
            "options": {"need_weights": True, "average_attn_weights": False},
            "expected": {"output": tensor_json(out), "weights": tensor_json(weights)},
        }
        with open(args.out + ".reference.json", "w") as f:
            json.dump(ref, f)
            f.write("\n")
        written.append(args.out + ".reference.json")
    for path in written:
        print(f"export_weights: wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
