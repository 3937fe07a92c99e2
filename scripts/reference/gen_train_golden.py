#!/usr/bin/python3
"""Golden training steps for the C++ decoder, from PyTorch (Debian's python3-torch).

Builds the same pre-LN decoder as cpp/include/mha/train/model.h in float64 (token and position
embeddings, LayerNorm, causal multi-head attention from a packed qkv Linear, MLP with exact GELU,
final LayerNorm, bias-free unembedding, cross-entropy with ignore_index=-1), then runs two
training steps with torch.nn.utils.clip_grad_norm_ and torch.optim.AdamW (weight decay on the
2-D tensors only), and writes the initial weights, both losses, every gradient and the updated
weights of each step to tests/golden/train/two_steps.txt.

Run: /usr/bin/python3 scripts/reference/gen_train_golden.py
"""
import math
import os

import torch
import torch.nn.functional as F

VOCAB, CONTEXT, D_MODEL, HEADS, LAYERS, BATCH = 11, 6, 8, 2, 2, 3
LEARNING_RATES = [1e-2, 5e-3]
BETA1, BETA2, EPS, WEIGHT_DECAY, CLIP = 0.9, 0.95, 1e-8, 0.1, 1.0

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden", "train", "two_steps.txt")


def parameter_shapes():
    c, v, f = D_MODEL, VOCAB, 4 * D_MODEL
    shapes = [("wte.weight", (v, c)), ("wpe.weight", (CONTEXT, c))]
    for layer in range(LAYERS):
        p = f"blocks.{layer}."
        shapes += [
            (p + "ln1.weight", (c,)), (p + "ln1.bias", (c,)),
            (p + "attn.qkv.weight", (3 * c, c)), (p + "attn.qkv.bias", (3 * c,)),
            (p + "attn.proj.weight", (c, c)), (p + "attn.proj.bias", (c,)),
            (p + "ln2.weight", (c,)), (p + "ln2.bias", (c,)),
            (p + "mlp.fc.weight", (f, c)), (p + "mlp.fc.bias", (f,)),
            (p + "mlp.proj.weight", (c, f)), (p + "mlp.proj.bias", (c,)),
        ]
    shapes += [("lnf.weight", (c,)), ("lnf.bias", (c,)), ("lm_head.weight", (v, c))]
    return shapes


def forward(params, tokens, targets):
    b, t = tokens.shape
    c, nh = D_MODEL, HEADS
    hs = c // nh
    x = params["wte.weight"][tokens] + params["wpe.weight"][:t]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for layer in range(LAYERS):
        p = lambda name: params[f"blocks.{layer}.{name}"]
        h = F.layer_norm(x, (c,), p("ln1.weight"), p("ln1.bias"), eps=1e-5)
        qkv = F.linear(h, p("attn.qkv.weight"), p("attn.qkv.bias"))
        q, k, v = qkv.split(c, dim=-1)
        q = q.view(b, t, nh, hs).transpose(1, 2)
        k = k.view(b, t, nh, hs).transpose(1, 2)
        v = v.view(b, t, nh, hs).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + F.linear(y, p("attn.proj.weight"), p("attn.proj.bias"))
        h = F.layer_norm(x, (c,), p("ln2.weight"), p("ln2.bias"), eps=1e-5)
        x = x + F.linear(F.gelu(F.linear(h, p("mlp.fc.weight"), p("mlp.fc.bias"))), p("mlp.proj.weight"), p("mlp.proj.bias"))
    x = F.layer_norm(x, (c,), params["lnf.weight"], params["lnf.bias"], eps=1e-5)
    logits = F.linear(x, params["lm_head.weight"])
    return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1), ignore_index=-1)


def main():
    torch.manual_seed(20261130)
    dtype = torch.float64
    params = {}
    for name, shape in parameter_shapes():
        if len(shape) == 2:
            value = 0.3 * torch.randn(shape, dtype=dtype)
        elif name.endswith("weight"):  # LayerNorm gains near 1
            value = 1.0 + 0.2 * torch.randn(shape, dtype=dtype)
        else:
            value = 0.2 * torch.randn(shape, dtype=dtype)
        params[name] = value.requires_grad_(True)

    batches = []
    for _ in LEARNING_RATES:
        tokens = torch.randint(0, VOCAB, (BATCH, CONTEXT))
        targets = torch.randint(0, VOCAB, (BATCH, CONTEXT))
        targets[torch.rand(BATCH, CONTEXT) < 0.25] = -1  # ignored, as padding is
        batches.append((tokens, targets))

    names = [name for name, _ in parameter_shapes()]
    decay = [params[n] for n in names if params[n].dim() == 2]
    no_decay = [params[n] for n in names if params[n].dim() != 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
        lr=LEARNING_RATES[0], betas=(BETA1, BETA2), eps=EPS)

    records = [("config", [VOCAB, CONTEXT, D_MODEL, HEADS, LAYERS, BATCH]),
               ("hyper", [BETA1, BETA2, EPS, WEIGHT_DECAY, CLIP]),
               ("lr", LEARNING_RATES)]
    for step, (tokens, targets) in enumerate(batches, start=1):
        records.append((f"tokens{step}", tokens.flatten().tolist()))
        records.append((f"targets{step}", targets.flatten().tolist()))
    for name in names:
        records.append((f"init.{name}", params[name].detach().flatten().tolist()))
    for step, ((tokens, targets), lr) in enumerate(zip(batches, LEARNING_RATES), start=1):
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad()
        loss = forward(params, tokens, targets)
        loss.backward()
        records.append((f"loss{step}", [loss.item()]))
        for name in names:
            records.append((f"grad{step}.{name}", params[name].grad.flatten().tolist()))
        norm = torch.nn.utils.clip_grad_norm_([params[n] for n in names], CLIP)
        records.append((f"grad_norm{step}", [norm.item()]))
        optimizer.step()
        for name in names:
            records.append((f"param{step}.{name}", params[name].detach().flatten().tolist()))
        print(f"step {step}: loss {loss.item():.10f}")

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(f"# Two training steps of the decoder in PyTorch {torch.__version__} (float64), by scripts/reference/gen_train_golden.py.\n")
        f.write("# Each line: name, count, values. grad<k>: gradients before clip_grad_norm_(1.0); param<k>: after the AdamW step.\n")
        for name, values in records:
            f.write(f"{name} {len(values)} " + " ".join(f"{v:.10g}" for v in values) + "\n")
    print(f"wrote {os.path.relpath(OUT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
