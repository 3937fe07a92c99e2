"""A two-layer GPT-2-layout model trained on repeated random tokens until it has an induction
head, and the same model before training: tests/golden/models/gpt2-induction and
gpt2-induction-random (config.json, model.safetensors, tokenizer.json: a byte-level BPE of 63
characters without merges, the first 63 pieces of tests/golden/models/tokenizers/bpe, and
<|endoftext|> as BOS: 64 tokens).

  /usr/bin/python3 scripts/reference/train_induction.py

The model: 2 layers of 2 heads of 32 (width 64), 128 learned positions started as sinusoids
× 0.1, attention only (each MLP's output weights held at 0, so the layout stays GPT-2's), the
attention weights drawn N(0, 0.1) (with GPT-2's 0.02 the heads sat on a plateau past 3,000
steps; with 0.1 the induction heads form near step 1,000).
Each sequence: BOS, then r_1..r_n repeated to 128 tokens, r drawn without repeats from the 63
ordinary tokens, n from 25 to 63 per sequence (so a head that looks a fixed distance back
cannot do the work, and a head that copies every token seen gains little); the loss on every
next token, so that in the first pass, where nothing can be known, a head that copies an
earlier token costs loss (an induction head learns to rest on BOS there, as GPT-2's do).
Every 250 steps it prints the layer-1 heads' induction score on the detector's sequences
(BOS, 50 tokens, the same 50; web/lib/detectors.js scores them the same way) and their share on
BOS. Seeded; 3,000 steps of batch 8 on one core (its runtime is given in docs/models.md).
"""
import json
import math
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
from hf_reference import GPT2_BASE, GPT2LMHeadModel, write_safetensors  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(ROOT, "tests", "golden", "models")
TOKENIZER = os.path.join(MODELS, "tokenizers", "bpe", "tokenizer.json")
SEED = 1
STEPS = 3000
BATCH = 8
T = 128
WIDTH = 64
HEADS = 2
ORDINARY = 63
SHORTEST = 25
TOK = None


def write(name, model, config):
    out = os.path.join(MODELS, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, separators=(",", ":"))
    tensors = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, "F32")
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(TOK, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def init(model):
    """Hugging Face's GPT-2 initialisation (weights N(0, 0.02), LayerNorms 1 and 0, biases 0),
    but token embeddings and attention weights N(0, 0.1), positions sin/cos × 0.1, and the MLPs'
    outputs 0."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name or "ln_f" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            elif ".attn." in name or name.endswith("wte.weight"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(0.0, 0.02)
        # wpe[t, 2k] = 0.1 sin(t / 10000^(2k/E)), wpe[t, 2k+1] = 0.1 cos(...)
        pos = torch.arange(T, dtype=torch.float32).view(-1, 1)
        freq = torch.exp(-math.log(10000.0) * torch.arange(0, WIDTH, 2, dtype=torch.float32) / WIDTH)
        wpe = model.transformer.wpe.weight
        wpe[:, 0::2] = 0.1 * torch.sin(pos * freq)
        wpe[:, 1::2] = 0.1 * torch.cos(pos * freq)
        for block in model.transformer.h:
            block.mlp.c_proj.weight.zero_()
            for p in block.mlp.parameters():
                p.requires_grad_(False)


def batch(g, bos, size):
    """size rows of (T,): BOS, then n distinct ordinary tokens repeated to T tokens."""
    rows = []
    for _ in range(size):
        n = int(torch.randint(SHORTEST, ORDINARY + 1, (1,), generator=g))
        r = torch.randperm(ORDINARY, generator=g)[:n]
        rows.append(torch.cat([torch.tensor([bos]), r.repeat(-(-(T - 1) // n))[:T - 1]]))
    return torch.stack(rows)


def induction_scores(model, bos):
    """Layer 1's heads on 10 sequences BOS, r_1..r_50, r_1..r_50: the share of attention past
    BOS on the token after the earlier copy, and the share on BOS."""
    g = torch.Generator().manual_seed(0)
    seqs = []
    for _ in range(10):
        r = torch.randperm(ORDINARY, generator=g)[:50]
        seqs.append(torch.cat([torch.tensor([bos]), r, r]))
    s = torch.stack(seqs)
    with torch.no_grad():
        _, attentions = model(s)
    a = attentions[1]  # (10, H, 101, 101)
    i = torch.arange(101).view(-1, 1)
    j = torch.arange(101).view(1, -1)
    same = s.view(10, -1, 1) == s.view(10, 1, -1)
    pattern = torch.zeros(10, 1, 101, 101)
    pattern[:, 0, :, 1:] = (same[:, :, :-1] & (j[:, 1:] <= i)).float()
    past = a.clone()
    past[..., 0] = 0
    score = ((past * pattern).sum((2, 3)) / past.sum((2, 3))).mean(0)
    return [float(x) for x in score], [float(x) for x in a[..., 0].mean((0, 2))]


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    global TOK
    with open(TOKENIZER) as f:
        tok = json.load(f)
    pieces = sorted(tok["model"]["vocab"].items(), key=lambda kv: kv[1])[:ORDINARY]
    bos = ORDINARY
    tok["model"]["vocab"] = dict(pieces)
    tok["model"]["merges"] = []
    tok["added_tokens"][0]["id"] = bos
    TOK = tok
    config = dict(GPT2_BASE, n_layer=2, n_head=HEADS, n_embd=WIDTH, n_inner=WIDTH, n_positions=T, n_ctx=T,
                  vocab_size=bos + 1, bos_token_id=bos, eos_token_id=bos)
    model = GPT2LMHeadModel(config)
    init(model)
    write("gpt2-induction-random", model, config)

    g = torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-3, weight_decay=0.01)
    start = time.process_time()
    for step in range(STEPS + 1):
        x = batch(g, bos, BATCH)
        logits, _ = model(x[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 250 == 0:
            scores, on_bos = induction_scores(model, bos)
            heads = "  ".join(f"1.{h}: induction {s:.2f} on BOS {b:.2f}" for h, (s, b) in enumerate(zip(scores, on_bos)))
            print(f"step {step} loss {float(loss):.3f}  {heads}  cpu {time.process_time() - start:.0f}s", flush=True)
    model.eval()
    write("gpt2-induction", model, config)


if __name__ == "__main__":
    main()
