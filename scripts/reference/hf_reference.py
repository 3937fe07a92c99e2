#!/usr/bin/python3
"""Reference models in Hugging Face layout, and their golden files (tests/golden/models/).

GPT-2 (GPT2LMHeadModel) and BERT (BertForMaskedLM, BertModel) written here module by module
after transformers' modeling_gpt2.py and modeling_bert.py (same module names, so the same
state_dict names), in plain torch: transformers itself is not installable here. Models are
random-initialised over config variations and written as save_pretrained writes them:
config.json, model.safetensors (F32; F16 and BF16 variants of one model each), tokenizer.json.

Two steps, with the ids from the reference tokenizer in between:

  /usr/bin/python3 scripts/reference/hf_reference.py tokenizers     # tests/golden/models/tokenizers/*/tokenizer.json
  node scripts/reference/hf_tokenizer_cases.js                      # tests/golden/models/tokenizer_cases.json (ids)
  /usr/bin/python3 scripts/reference/hf_reference.py models         # tests/golden/models/<name>/ and <name>.golden.json
  /usr/bin/python3 scripts/reference/hf_reference.py nanogpt        # a nanoGPT checkpoint through scripts/export/export_nanogpt.py

The tokenizers are small ones made here (no hub): a byte-level BPE whose merges are learned on
the repo's sentences (tests/golden/train/sentences.txt, tests/golden/encoder/sentences.json),
and a WordPiece vocabulary of those sentences' characters, frequent words and suffixes.
"""
import json
import math
import os
import struct
import sys
import unicodedata
from collections import Counter

import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "models")
TOKENIZERS = os.path.join(OUT, "tokenizers")


# ---------------------------------------------------------------------------------------------
# activations.py's ACT2FN, the entries the configs below use

class NewGELUActivation(nn.Module):
    # gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GELUActivation(nn.Module):
    def forward(self, x):
        return nn.functional.gelu(x)


class PytorchGELUTanh(nn.Module):
    def forward(self, x):
        return nn.functional.gelu(x, approximate="tanh")


ACT2FN = {
    "gelu_new": NewGELUActivation,
    "gelu": GELUActivation,
    "gelu_pytorch_tanh": PytorchGELUTanh,
    "relu": nn.ReLU,
    "silu": nn.SiLU,
    "swish": nn.SiLU,
}


# ---------------------------------------------------------------------------------------------
# modeling_gpt2.py

class Conv1D(nn.Module):
    # pytorch_utils.Conv1D: weight (nx, nf) = [in, out]; y = x @ W + b
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        max_positions = config["n_positions"]
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions),
            persistent=False,
        )
        self.embed_dim = config["n_embd"]
        self.num_heads = config["n_head"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scale_attn_weights = config.get("scale_attn_weights", True)
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def _attn(self, query, key, value, head_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        # Mask heads if we want to
        if head_mask is not None:
            attn_weights = attn_weights * head_mask
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        return tensor.view(new_shape).permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (num_heads * attn_head_size,))

    def forward(self, hidden_states, head_mask=None):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output, attn_weights = self._attn(query, key, value, head_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        return attn_output, attn_weights


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config["n_embd"]
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = ACT2FN[config["activation_function"]]()

    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states)))


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        hidden_size = config["n_embd"]
        inner_dim = config["n_inner"] if config.get("n_inner") is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config["layer_norm_epsilon"])
        self.attn = GPT2Attention(config, layer_idx=layer_idx)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config["layer_norm_epsilon"])
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, head_mask=None):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output, attn_weights = self.attn(hidden_states, head_mask=head_mask)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        return hidden_states, attn_weights


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_dim = config["n_embd"]
        self.wte = nn.Embedding(config["vocab_size"], self.embed_dim)
        self.wpe = nn.Embedding(config["n_positions"], self.embed_dim)
        self.h = nn.ModuleList([GPT2Block(config, layer_idx=i) for i in range(config["n_layer"])])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=config["layer_norm_epsilon"])

    def forward(self, input_ids, head_mask=None):
        position_ids = torch.arange(0, input_ids.size(-1), dtype=torch.long).unsqueeze(0)
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        attentions = []
        # get_head_mask: (L, H) -> per layer (1, H, 1, 1), multiplying the attention probabilities
        for i, block in enumerate(self.h):
            layer_mask = None if head_mask is None else head_mask[i].view(1, -1, 1, 1)
            hidden_states, attn_weights = block(hidden_states, head_mask=layer_mask)
            attentions.append(attn_weights)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states, attentions


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config["n_embd"], config["vocab_size"], bias=False)
        if config.get("tie_word_embeddings", True):
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids, head_mask=None):
        hidden_states, attentions = self.transformer(input_ids, head_mask=head_mask)
        return self.lm_head(hidden_states), attentions


# ---------------------------------------------------------------------------------------------
# modeling_bert.py

class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config["vocab_size"], config["hidden_size"], padding_idx=config.get("pad_token_id", 0))
        self.position_embeddings = nn.Embedding(config["max_position_embeddings"], config["hidden_size"])
        self.token_type_embeddings = nn.Embedding(config["type_vocab_size"], config["hidden_size"])
        self.LayerNorm = nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"])
        self.register_buffer("position_ids", torch.arange(config["max_position_embeddings"]).expand((1, -1)), persistent=False)

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, 0:seq_length]
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        return self.LayerNorm(embeddings)


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config["num_attention_heads"]
        self.attention_head_size = int(config["hidden_size"] / config["num_attention_heads"])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(config["hidden_size"], self.all_head_size)
        self.key = nn.Linear(config["hidden_size"], self.all_head_size)
        self.value = nn.Linear(config["hidden_size"], self.all_head_size)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        context_layer = context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))
        return context_layer, attention_probs


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config["hidden_size"], config["hidden_size"])
        self.LayerNorm = nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attention_mask):
        context, probs = self.self(hidden_states, attention_mask)
        return self.output(context, hidden_states), probs


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config["hidden_size"], config["intermediate_size"])
        self.intermediate_act_fn = ACT2FN[config["hidden_act"]]()

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config["intermediate_size"], config["hidden_size"])
        self.LayerNorm = nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attention_mask):
        attention_output, probs = self.attention(hidden_states, attention_mask)
        layer_output = self.output(self.intermediate(attention_output), attention_output)
        return layer_output, probs


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config["num_hidden_layers"])])

    def forward(self, hidden_states, attention_mask):
        attentions = []
        for layer_module in self.layer:
            hidden_states, probs = layer_module(hidden_states, attention_mask)
            attentions.append(probs)
        return hidden_states, attentions


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config["hidden_size"], config["hidden_size"])
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


class BertModel(nn.Module):
    def __init__(self, config, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None

    def forward(self, input_ids):
        token_type_ids = torch.zeros_like(input_ids)
        attention_mask = torch.ones_like(input_ids, dtype=torch.float32)
        # get_extended_attention_mask: (1 - mask) * finfo.min, broadcast over heads and queries
        extended_attention_mask = (1.0 - attention_mask[:, None, None, :]) * torch.finfo(torch.float32).min
        embedding_output = self.embeddings(input_ids, token_type_ids)
        sequence_output, attentions = self.encoder(embedding_output, extended_attention_mask)
        pooled_output = self.pooler(sequence_output) if self.pooler is not None else None
        return sequence_output, pooled_output, attentions


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config["hidden_size"], config["hidden_size"])
        self.transform_act_fn = ACT2FN[config["hidden_act"]]()
        self.LayerNorm = nn.LayerNorm(config["hidden_size"], eps=config["layer_norm_eps"])

    def forward(self, hidden_states):
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)
        self.bias = nn.Parameter(torch.zeros(config["vocab_size"]))
        self.decoder.bias = self.bias

    def forward(self, hidden_states):
        return self.decoder(self.transform(hidden_states))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, sequence_output):
        return self.predictions(sequence_output)


class BertForMaskedLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        if config.get("tie_word_embeddings", True):
            self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def forward(self, input_ids):
        sequence_output, _, attentions = self.bert(input_ids)
        return self.cls(sequence_output), attentions


# ---------------------------------------------------------------------------------------------
# Writing HF layout

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def write_safetensors(path, tensors, dtype):
    """safetensors by hand: u64 header length, header JSON, raw little-endian bytes."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to(DTYPES[dtype]).contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if dtype != "F32" else t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def saved_state_dict(model, tied_names):
    """state_dict as save_pretrained writes it: tied copies left out."""
    return {k: v for k, v in model.state_dict().items() if k not in tied_names}


def round_to(model, dtype):
    """The weights as a file of `dtype` holds them, back in float32: what the core computes on."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(DTYPES[dtype]).to(torch.float32))


def randomise(model, seed, std):
    """Random weights wide enough that heads attend unevenly; LayerNorms off 1 and 0."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name or ".ln_" in name or name.startswith("transformer.ln_f") or "ln_f" in name:
                base = 1.0 if name.endswith("weight") else 0.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


# ---------------------------------------------------------------------------------------------
# Small tokenizers

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def gpt2_pretokenize(text):
    """GPT-2's pattern, for learning merges only (the ids' reference is the JS tokenizer)."""
    cat = lambda c: unicodedata.category(c)[0]
    out, i, n = [], 0, len(text)
    while i < n:
        for c in ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d"):
            if text.startswith(c, i):
                out.append(c)
                i += len(c)
                break
        else:
            j = i + 1 if text[i] == " " and i + 1 < n else i
            kind = cat(text[j]) if not text[j].isspace() else "space"
            if kind != "space":
                k = j
                same = (lambda c: cat(c) == kind) if kind in ("L", "N") else (lambda c: not c.isspace() and cat(c) not in ("L", "N"))
                while k < n and same(text[k]):
                    k += 1
                out.append(text[i:k])
                i = k
            else:
                k = i
                while k < n and text[k].isspace():
                    k += 1
                if k < n and k - i > 1:
                    k -= 1
                out.append(text[i:k])
                i = k
    return out


def corpus():
    lines = []
    with open(os.path.join(ROOT, "tests", "golden", "train", "sentences.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#") and "\t" in line:
                lines.append(line.rstrip("\n").split("\t", 1)[1])
    with open(os.path.join(ROOT, "tests", "golden", "encoder", "sentences.json"), encoding="utf-8") as f:
        for group in json.load(f)["groups"].values():
            lines.extend(s for s in group if len(s) < 400 and not any(0xD800 <= ord(c) <= 0xDFFF for c in s))
    return lines


def learn_bpe(lines, num_merges):
    b2u = bytes_to_unicode()
    words = Counter()
    for line in lines:
        for piece in gpt2_pretokenize(line):
            words[tuple(b2u[b] for b in piece.encode("utf-8"))] += 1
    vocab = {b2u[b]: i for i, b in enumerate(sorted(b2u, key=lambda b: b2u[b]))}
    merges = []
    words = dict(words)
    for _ in range(num_merges):
        pairs = Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        vocab[a + b] = len(vocab)
        merged = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + c
        words = merged
    return vocab, merges


def added(content, id_, normalized):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": normalized, "special": True}


def bpe_tokenizer_json(vocab, merges, merges_as_pairs):
    eot = len(vocab)
    vocab = dict(vocab)
    vocab["<|endoftext|>"] = eot
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("<|endoftext|>", eot, True)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab,
                  "merges": [[a, b] for a, b in merges] if merges_as_pairs else [a + " " + b for a, b in merges]},
    }


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def wordpiece_vocab(lines, lowercase, num_words):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = Counter()
    chars = Counter()
    for line in lines:
        text = strip_accents(line.lower()) if lowercase else line
        word = ""
        for c in text + " ":
            if c.isalnum():
                word += c
            else:
                if word:
                    words[word] += 1
                word = ""
            if not c.isspace():
                chars[c] += 1
    # every ASCII letter, digit and punctuation mark, and the corpus's other characters that
    # come three times or more (rarer ones become [UNK], which the cases need too)
    ascii_chars = {chr(c) for c in range(33, 127)}
    chars = {c for c, n in chars.items() if n >= 3} | {c.lower() if lowercase else c for c in ascii_chars}
    pieces = list(specials)
    pieces += sorted(chars)
    pieces += ["##" + c for c in sorted(chars) if c.isalnum()]
    for suffix in ("s", "es", "ed", "ing", "ly", "er", "est", "self", "selves"):
        if "##" + suffix not in pieces:
            pieces.append("##" + suffix)
    size = len(pieces) + num_words
    for w, _ in words.most_common():
        if len(pieces) >= size:
            break
        if w not in pieces and len(w) > 1:
            pieces.append(w)
    return {p: i for i, p in enumerate(pieces)}


def wordpiece_tokenizer_json(vocab, lowercase, strip, template):
    ids = {t: vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")}
    if template:
        post = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")},
        }
    else:
        post = {"type": "BertProcessing", "sep": ["[SEP]", ids["[SEP]"]], "cls": ["[CLS]", ids["[CLS]"]]}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(t, i, False) for t, i in ids.items()],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": strip, "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def make_tokenizers():
    lines = corpus()
    vocab, merges = learn_bpe(lines, 120)
    write_json(os.path.join(TOKENIZERS, "bpe", "tokenizer.json"), bpe_tokenizer_json(vocab, merges, False))
    write_json(os.path.join(TOKENIZERS, "bpe-pairs", "tokenizer.json"), bpe_tokenizer_json(vocab, merges, True))
    uncased = wordpiece_vocab(lines, True, 80)
    write_json(os.path.join(TOKENIZERS, "wordpiece-uncased", "tokenizer.json"),
               wordpiece_tokenizer_json(uncased, True, None, True))
    cased = wordpiece_vocab(lines, False, 80)
    write_json(os.path.join(TOKENIZERS, "wordpiece-cased", "tokenizer.json"),
               wordpiece_tokenizer_json(cased, False, False, False))
    print("tokenizers: bpe", len(vocab) + 1, "pieces,", len(merges), "merges; wordpiece", len(uncased), len(cased))


# ---------------------------------------------------------------------------------------------
# Model cases

GPT2_BASE = {
    "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
    "attn_pdrop": 0.1, "embd_pdrop": 0.1, "resid_pdrop": 0.1, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-5, "n_ctx": 32, "n_positions": 32, "n_embd": 32, "n_head": 4, "n_layer": 2,
    "n_inner": None, "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
    "reorder_and_upcast_attn": False, "summary_activation": None, "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
    "use_cache": True, "torch_dtype": "float32", "transformers_version": "4.36.2",
}

BERT_BASE = {
    "architectures": ["BertForMaskedLM"], "model_type": "bert", "attention_probs_dropout_prob": 0.1,
    "classifier_dropout": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
    "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-12, "max_position_embeddings": 32,
    "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 0, "position_embedding_type": "absolute",
    "type_vocab_size": 2, "use_cache": True, "torch_dtype": "float32", "transformers_version": "4.36.2",
}

# A small GPT-2-layout model trained here on the repo's sentences, so that its heads and
# predictions mean something: the grammar sentences 0-79 and the encoder's sentences, the
# grammar's 80-99 held out. name, tokenizer, config changes, seed.
TRAINED = ("gpt2-trained", "bpe", {"n_layer": 2, "n_head": 4, "n_embd": 32, "n_positions": 64, "n_ctx": 64}, 8)

# name, family, tokenizer, config changes, dtypes written, seed, std
CASES = [
    ("gpt2-tied", "gpt2", "bpe", {"n_embd": 24}, ["F32", "F16", "BF16"], 1, 0.3),
    ("gpt2-untied", "gpt2", "bpe-pairs",
     {"n_layer": 3, "n_head": 2, "n_embd": 16, "n_inner": 24, "layer_norm_epsilon": 1e-6, "activation_function": "gelu",
      "tie_word_embeddings": False}, ["F32"], 2, 0.3),
    ("gpt2-one-head", "gpt2", "bpe",
     {"n_layer": 1, "n_head": 1, "n_embd": 16, "layer_norm_epsilon": 1e-3, "activation_function": "relu"}, ["F32"], 3, 0.4),
    (TRAINED[0], "gpt2", TRAINED[1], TRAINED[2], ["F32"], TRAINED[3], 0.02),
    ("bert-mlm", "bert", "wordpiece-uncased", {"hidden_size": 24, "intermediate_size": 48}, ["F32", "F16", "BF16"], 4, 0.3),
    ("bert-base-model", "bert", "wordpiece-cased",
     {"architectures": ["BertModel"], "num_hidden_layers": 1, "num_attention_heads": 2, "hidden_size": 16,
      "intermediate_size": 24, "layer_norm_eps": 1e-5, "hidden_act": "gelu_new"}, ["F32"], 5, 0.4),
    ("bert-untied", "bert", "wordpiece-uncased",
     {"num_hidden_layers": 3, "num_attention_heads": 8, "hidden_size": 16, "intermediate_size": 32,
      "hidden_act": "relu", "tie_word_embeddings": False, "type_vocab_size": 1}, ["F32"], 6, 0.3),
]


# A small GPT-2-layout model trained here on the repo's sentences (train_small_gpt below).


def bpe_encode(tok, text):
    """Byte-level BPE by merge rank on gpt2_pretokenize's pieces (for the training data; the
    committed held-out ids are checked against the reference tokenizer)."""
    b2u = bytes_to_unicode()
    vocab = tok["model"]["vocab"]
    ranks = {tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m): i for i, m in enumerate(tok["model"]["merges"])}
    ids = []
    for piece in gpt2_pretokenize(text):
        word = [b2u[b] for b in piece.encode("utf-8")]
        while len(word) > 1:
            pairs = [(ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            word[i:i + 2] = [word[i] + word[i + 1]]
        ids.extend(vocab[w] for w in word)
    return ids


def grammar_sentences():
    out = []
    with open(os.path.join(ROOT, "tests", "golden", "train", "sentences.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#") and "\t" in line:
                out.append(line.rstrip("\n").split("\t", 1)[1])
    return out


def train_small_gpt(model, config, tok, seed):
    grammar = grammar_sentences()
    held_out = grammar[80:]
    lines = grammar[:80] + [l for l in corpus() if l not in grammar]
    eot = tok["model"]["vocab"]["<|endoftext|>"]
    stream = []
    for line in lines:
        stream += bpe_encode(tok, line) + [eot]
    data = torch.tensor(stream)
    T = config["n_positions"]
    g = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    model.train()
    for step in range(1500):
        starts = torch.randint(0, len(data) - T - 1, (16,), generator=g)
        x = torch.stack([data[i:i + T] for i in starts])
        y = torch.stack([data[i + 1:i + T + 1] for i in starts])
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    # held-out next-token top-1 accuracy
    cases, right, total = [], 0, 0
    with torch.no_grad():
        for text in held_out:
            ids = bpe_encode(tok, text)[:T]
            logits, _ = model(torch.tensor([ids]))
            guess = logits[0, :-1].argmax(-1)
            right += int((guess == torch.tensor(ids[1:])).sum())
            total += len(ids) - 1
            cases.append({"text": text, "ids": ids})
    return {"train_tokens": len(stream), "steps": 1500, "final_loss": float(loss), "held_out": cases,
            "held_out_top1": right / total, "held_out_predictions": total}


def head_importance(model, config, ids):
    """(L, H): the mean drop in log p(actual next token) when each head is masked (head_mask)."""
    L, H = config["n_layer"], config["n_head"]
    ids_t = torch.tensor([ids])
    target = ids_t[0, 1:]

    def logprobs(mask):
        logits, _ = model(ids_t, head_mask=mask)
        return torch.log_softmax(logits[0, :-1].double(), dim=-1).gather(1, target[:, None])[:, 0]

    base = logprobs(None)
    out = []
    for l in range(L):
        for h in range(H):
            mask = torch.ones(L, H)
            mask[l, h] = 0
            out.append(float((base - logprobs(mask)).mean()))
    return out


def rounded(values, digits=7):
    return [float(f"{v:.{digits}g}") for v in values]


def make_models():
    with open(os.path.join(OUT, "tokenizer_cases.json"), encoding="utf-8") as f:
        tokenizer_cases = json.load(f)
    summary = []
    for name, family, tokenizer, changes, dtypes, seed, std in CASES:
        with open(os.path.join(TOKENIZERS, tokenizer, "tokenizer.json"), encoding="utf-8") as f:
            tok = json.load(f)
        vocab_size = len(tok["model"]["vocab"])
        config = dict(GPT2_BASE if family == "gpt2" else BERT_BASE)
        config.update(changes)
        config["vocab_size"] = vocab_size
        if family == "gpt2":
            config["bos_token_id"] = config["eos_token_id"] = vocab_size - 1
        torch.manual_seed(seed)
        if family == "gpt2":
            model = GPT2LMHeadModel(config)
            tied = {"lm_head.weight"} if config.get("tie_word_embeddings", True) else set()
        elif config["architectures"] == ["BertModel"]:
            model = BertModel(config)
            tied = set()
        else:
            model = BertForMaskedLM(config)
            tied = {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}
            if not config.get("tie_word_embeddings", True):
                tied = {"cls.predictions.decoder.bias"}
        randomise(model, seed, std)
        training = train_small_gpt(model, config, tok, seed) if name == TRAINED[0] else None
        model.eval()
        texts = [c for c in tokenizer_cases["tokenizers"][tokenizer]["cases"] if 0 < len(c["ids"]) <= 24][:2]
        directory = os.path.join(OUT, name)
        os.makedirs(directory, exist_ok=True)
        write_json(os.path.join(directory, "config.json"), config)
        write_json(os.path.join(directory, "tokenizer.json"), tok)
        files = {"F32": "model.safetensors", "F16": "model.f16.safetensors", "BF16": "model.bf16.safetensors"}
        master = {k: v.clone() for k, v in model.state_dict().items()}
        state = {k: master[k] for k in saved_state_dict(model, tied)}
        golden = {"name": name, "family": family, "config": config, "dtypes": {}}
        if training is not None:
            golden["training"] = training
        for dtype in dtypes:
            write_safetensors(os.path.join(directory, files[dtype]), state, dtype)
            model.load_state_dict(master)
            round_to(model, dtype)
            runs = []
            with torch.no_grad():
                # two texts in float32, one in each half-precision file
                for case in texts if dtype == "F32" else texts[:1]:
                    ids = torch.tensor([case["ids"]])
                    if family == "gpt2":
                        logits, attentions = model(ids)
                    elif config["architectures"] == ["BertModel"]:
                        hidden, pooled, attentions = model(ids)
                        logits = None
                    else:
                        logits, attentions = model(ids)
                    run = {"text": case["text"], "ids": case["ids"],
                           "attentions": [rounded(a[0].flatten().tolist()) for a in attentions]}
                    if family == "gpt2" and dtype == "F32":
                        run["head_importance"] = rounded(head_importance(model, config, case["ids"]))
                    if logits is not None:
                        # the logits at the first, middle and last positions: (3, vocab)
                        T = len(case["ids"])
                        run["logit_positions"] = [0, T // 2, T - 1]
                        run["logits"] = rounded(logits[0, run["logit_positions"]].flatten().tolist())
                    else:
                        run["last_hidden_state"] = rounded(hidden[0].flatten().tolist())
                        run["pooler_output"] = rounded(pooled[0].flatten().tolist())
                    runs.append(run)
            golden["dtypes"][dtype] = {"file": files[dtype], "runs": runs}
        write_json(os.path.join(OUT, name + ".golden.json"), golden)
        summary.append(f"{name}: {', '.join(dtypes)}, {len(texts)} texts")
    print("\n".join(summary))


# ---------------------------------------------------------------------------------------------
# nanoGPT (karpathy/nanoGPT model.py): a character-level checkpoint as train.py saves it, run
# through scripts/export/export_nanogpt.py; the golden weights and logits are nanoGPT's own forward.

class NanoLayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return nn.functional.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoCausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.n_head, self.n_embd = c["n_head"], c["n_embd"]
        self.register_buffer("bias", torch.tril(torch.ones(c["block_size"], c["block_size"])).view(1, 1, c["block_size"], c["block_size"]))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        # the manual path (no flash attention), which has the weights
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = nn.functional.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y), att


class NanoMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class NanoBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = NanoLayerNorm(c["n_embd"], bias=c["bias"])
        self.attn = NanoCausalSelfAttention(c)
        self.ln_2 = NanoLayerNorm(c["n_embd"], bias=c["bias"])
        self.mlp = NanoMLP(c)

    def forward(self, x):
        a, att = self.attn(self.ln_1(x))
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, att


class NanoGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([NanoBlock(c) for _ in range(c["n_layer"])]),
            ln_f=NanoLayerNorm(c["n_embd"], bias=c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        attentions = []
        for block in self.transformer.h:
            x, att = block(x)
            attentions.append(att)
        x = self.transformer.ln_f(x)
        return self.lm_head(x), attentions  # every position's logits (train.py's path with targets)


def make_nanogpt():
    import pickle
    import tempfile
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "export"))
    import export_nanogpt

    chars = sorted(set("".join(corpus())))
    stoi = {ch: i for i, ch in enumerate(chars)}
    args = {"n_layer": 2, "n_head": 4, "n_embd": 16, "block_size": 48, "bias": False, "vocab_size": len(chars), "dropout": 0.0}
    torch.manual_seed(7)
    model = NanoGPT(args)
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_((1.0 + 0.1 * torch.randn(p.shape, generator=g)) if "ln_" in name else 0.3 * torch.randn(p.shape, generator=g))
    model.eval()
    work = tempfile.mkdtemp()
    ckpt = os.path.join(work, "ckpt.pt")
    # as train.py saves it after torch.compile: names prefixed with _orig_mod.
    state = {"_orig_mod." + k: v for k, v in model.state_dict().items()}
    torch.save({"model": state, "model_args": args, "iter_num": 0, "best_val_loss": 0.0, "config": {"dataset": "repo_char"}}, ckpt)
    with open(os.path.join(work, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": {i: ch for ch, i in stoi.items()}, "stoi": stoi}, f)
    directory = os.path.join(OUT, "nanogpt-char")
    config, _ = export_nanogpt.export(ckpt, directory)
    # its tokenizer among the reference's cases too (scripts/reference/hf_tokenizer_cases.js)
    os.makedirs(os.path.join(TOKENIZERS, "char"), exist_ok=True)
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
        write_json(os.path.join(TOKENIZERS, "char", "tokenizer.json"), json.load(f))
    texts = ["the king follows himself.", "At dawn."]
    runs = []
    with torch.no_grad():
        for text in texts:
            ids = [stoi[ch] for ch in text]
            logits, attentions = model(torch.tensor([ids]))
            T = len(ids)
            positions = [0, T // 2, T - 1]
            runs.append({"text": text, "ids": ids, "attentions": [rounded(a[0].flatten().tolist()) for a in attentions],
                         "logit_positions": positions, "logits": rounded(logits[0, positions].flatten().tolist())})
    write_json(os.path.join(OUT, "nanogpt-char.golden.json"),
               {"name": "nanogpt-char", "family": "gpt2", "config": config, "source": "nanoGPT checkpoint via scripts/export/export_nanogpt.py",
                "dtypes": {"F32": {"file": "model.safetensors", "runs": runs}}})
    print(f"nanogpt-char: {len(chars)} characters, {args['n_layer']} layers x {args['n_head']} heads, bias=False")


if __name__ == "__main__":
    torch.set_num_threads(1)
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "tokenizers":
        make_tokenizers()
    elif what == "models":
        make_models()
    elif what == "nanogpt":
        make_nanogpt()
    else:
        sys.exit(__doc__)
