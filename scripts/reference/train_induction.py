"""A two-layer GPT-2-layout model trained on repeated random tokens until it has an induction
head, and a random initialisation of the same shape: tests/golden/models/gpt2-induction and
gpt2-induction-random (config.json, model.safetensors, tokenizer.json: a byte-level BPE of 63
characters without merges, the first 63 pieces of tests/golden/models/tokenizers/bpe, and
<|endoftext|> as BOS: 64 tokens).

  /usr/bin/python3 scripts/reference/train_induction.py

Each batch: BOS, r_1..r_n, r_1..r_n, then random tokens to 128 positions, n drawn from 4..50 per
batch (so a head that looks a fixed distance back cannot do the work), the loss on every next
token of the repeat (r_2..r_n, the ones a model can know). Seeded; a few minutes of one core.
"""
import json
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
SEED = 33
STEPS = 1500
T = 128
ORDINARY = 63
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
    """Hugging Face's GPT-2 initialisation: weights N(0, 0.02), LayerNorms 1 and 0, biases 0."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name or "ln_f" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.normal_(0.0, 0.02)


def batch(g, vocab, bos, size):
    n = int(torch.randint(4, 51, (1,), generator=g))
    r = torch.randint(0, vocab, (size, n), generator=g)
    tail = torch.randint(0, vocab, (size, T - 1 - 2 * n), generator=g)
    return torch.cat([torch.full((size, 1), bos), r, r, tail], dim=1), n


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
    vocab = bos  # ordinary tokens: 0..bos-1
    config = dict(GPT2_BASE, n_layer=2, n_head=4, n_embd=32, n_inner=32, n_positions=T, n_ctx=T, vocab_size=bos + 1,
                  bos_token_id=bos, eos_token_id=bos)
    random_model = GPT2LMHeadModel(config)
    init(random_model)
    write("gpt2-induction-random", random_model, config)

    model = GPT2LMHeadModel(config)
    init(model)
    g = torch.Generator().manual_seed(SEED)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    start = time.process_time()
    for step in range(STEPS):
        x, n = batch(g, vocab, bos, 8)
        logits, _ = model(x[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1), reduction="none")
        loss = loss.view(8, -1)
        repeat = loss[:, n + 1:2 * n].mean()  # the predictable tokens: r_2..r_n of the repeat
        total = loss.mean()
        optimizer.zero_grad()
        repeat.backward()
        optimizer.step()
        if step % 50 == 0 or step == STEPS - 1:
            print(f"step {step} loss {float(total):.3f} repeat-loss {float(repeat):.3f} n {n} cpu {time.process_time() - start:.0f}s", flush=True)
    model.eval()
    write("gpt2-induction", model, config)


if __name__ == "__main__":
    main()
