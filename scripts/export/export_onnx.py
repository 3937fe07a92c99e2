#!/usr/bin/python3
"""Exports torch.nn.MultiheadAttention to ONNX for the benchmark's onnxruntime-web engine.

The module is nn.MultiheadAttention(E, H, batch_first=True) with the benchmark's weights
(read from the raw float32 file bench/data.js writes: in_proj_weight, in_proj_bias,
out_proj.weight, out_proj.bias, in that order), called as self-attention with
need_weights=False; opset 14; the sequence length is a dynamic axis, so one model serves every
shape with the same (E, H).

    /usr/bin/python3 scripts/export/export_onnx.py --embed-dim 512 --num-heads 8 \
        --weights build/bench/weights_E512_H8.f32 --out build/bench/mha_E512_H8.onnx

Needs Debian's PyTorch (python3-torch 1.13, run with /usr/bin/python3).
"""
import argparse
import sys

import numpy as np
import torch


class SelfAttention(torch.nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embed-dim", type=int, required=True)
    parser.add_argument("--num-heads", type=int, required=True)
    parser.add_argument("--weights", required=True, help="raw float32 parameters (bench/data.js)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seq-len", type=int, default=16, help="length of the example input")
    args = parser.parse_args()

    E, H = args.embed_dim, args.num_heads
    model = SelfAttention(E, H).eval()
    flat = np.fromfile(args.weights, dtype=np.float32)
    sizes = [("in_proj_weight", (3 * E, E)), ("in_proj_bias", (3 * E,)),
             ("out_proj.weight", (E, E)), ("out_proj.bias", (E,))]
    expected = sum(int(np.prod(s)) for _, s in sizes)
    if flat.size != expected:
        sys.exit(f"{args.weights}: expected {expected} floats for E={E}, got {flat.size}")
    state, at = {}, 0
    for name, shape in sizes:
        n = int(np.prod(shape))
        state[name] = torch.from_numpy(flat[at:at + n].reshape(shape).copy())
        at += n
    model.mha.load_state_dict(state)

    # In eval mode PyTorch 1.13 takes its fused fast path (aten::_native_multi_head_attention),
    # which has no ONNX export; training mode with dropout 0 traces the same math as plain ops.
    model.train()
    x = torch.randn(1, args.seq_len, E)
    with torch.no_grad():
        torch.onnx.export(model, (x,), args.out, opset_version=14, input_names=["x"],
                          output_names=["out"], dynamic_axes={"x": {1: "L"}, "out": {1: "L"}},
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    print(f"wrote {args.out} (torch {torch.__version__}, opset 14)")


if __name__ == "__main__":
    main()
