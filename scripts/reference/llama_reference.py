#!/usr/bin/python3
"""Llama-family reference models (Llama, Mistral, Qwen2) and their golden files (tests/golden/models/).

Written here module by module after transformers' modeling_llama.py, modeling_mistral.py,
modeling_qwen2.py (their eager attention path, which returns the weights) and
modeling_rope_utils.py, in plain torch (transformers is not installable here; Debian's torch 1.13
has no nn.RMSNorm or scaled_dot_product_attention, so both are written out). The state_dict names
are the ones those files give. Random weights over config variations, written as save_pretrained
writes them (config.json, model.safetensors in F32, and F16 / BF16 variants), with the repo's
small byte-level BPE tokenizer (tests/golden/models/tokenizers/bpe, from hf_reference.py).

A second, independent check of the rotary convention: every model's first layer is recomputed
with Meta's complex-number form (llama/model.py: precompute_freqs_cis, apply_rotary_emb on
interleaved pairs) on q and k weights un-permuted from the Hugging Face layout as
convert_llama_weights_to_hf.py permutes them; its attention weights must equal the reference's.

  /usr/bin/python3 scripts/reference/llama_reference.py     # after hf_reference.py tokenizers
"""
import json
import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import OUT, TOKENIZERS, rounded, round_to, write_json, write_safetensors  # noqa: E402


# ---------------------------------------------------------------------------------------------
# modeling_rope_utils.py: inverse frequencies and the attention scaling of each rope_type

def rope_parameters(config):
    """(rope_type, theta, the scaling's dict) from rope_parameters (v5) or rope_scaling + rope_theta."""
    scaling = config.get("rope_parameters") or config.get("rope_scaling") or {}
    theta = scaling.get("rope_theta", config.get("rope_theta", 10000.0))
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    return rope_type, theta, scaling


def head_dim_of(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def _compute_default_rope_parameters(config):
    _, base, _ = rope_parameters(config)
    dim = head_dim_of(config)
    attention_factor = 1.0
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, attention_factor


def _compute_linear_scaling_rope_parameters(config):
    factor = rope_parameters(config)[2]["factor"]
    inv_freq, attention_factor = _compute_default_rope_parameters(config)
    inv_freq /= factor
    return inv_freq, attention_factor


def _compute_dynamic_ntk_parameters(config, seq_len=None):
    _, base, scaling = rope_parameters(config)
    dim = head_dim_of(config)
    max_position_embeddings = config["max_position_embeddings"]
    factor = scaling["factor"]
    attention_factor = 1.0
    seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, attention_factor


def _compute_llama3_parameters(config):
    inv_freq, attention_factor = _compute_default_rope_parameters(config)
    scaling = rope_parameters(config)[2]
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, attention_factor


ROPE_INIT_FUNCTIONS = {
    "default": _compute_default_rope_parameters,
    "linear": _compute_linear_scaling_rope_parameters,
    "dynamic": _compute_dynamic_ntk_parameters,
    "llama3": _compute_llama3_parameters,
}


def llama3_bands(config, inv_freq_default):
    """How many frequencies fall in each llama3 band (high kept, medium smoothed, low divided)."""
    scaling = rope_parameters(config)[2]
    wavelen = 2 * math.pi / inv_freq_default
    low = scaling["original_max_position_embeddings"] / scaling["low_freq_factor"]
    high = scaling["original_max_position_embeddings"] / scaling["high_freq_factor"]
    return {"high": int((wavelen < high).sum()), "medium": int(((wavelen >= high) & (wavelen <= low)).sum()),
            "low": int((wavelen > low).sum())}


# ---------------------------------------------------------------------------------------------
# modeling_llama.py (Mistral and Qwen2 are the same modules with other biases and windows)

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.rope_type = rope_parameters(config)[0]
        self.config = config
        inv_freq, self.attention_scaling = ROPE_INIT_FUNCTIONS[self.rope_type](config)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_max_seq_len = config["max_position_embeddings"]

    @torch.no_grad()
    def forward(self, x, position_ids):
        if self.rope_type == "dynamic":  # dynamic_rope_update: new frequencies only past the trained length
            seq_len = int(torch.max(position_ids)) + 1
            if seq_len > self.original_max_seq_len:
                self.inv_freq, self.attention_scaling = _compute_dynamic_ntk_parameters(self.config, seq_len)
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(module, query, key, value, attention_mask, scaling):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


class LlamaAttention(nn.Module):
    def __init__(self, config, layer_idx, q_bias, o_bias):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = head_dim_of(config)
        self.num_key_value_groups = config["num_attention_heads"] // config["num_key_value_heads"]
        self.scaling = self.head_dim ** -0.5
        H, G, E = config["num_attention_heads"], config["num_key_value_heads"], config["hidden_size"]
        self.q_proj = nn.Linear(E, H * self.head_dim, bias=q_bias)
        self.k_proj = nn.Linear(E, G * self.head_dim, bias=q_bias)
        self.v_proj = nn.Linear(E, G * self.head_dim, bias=q_bias)
        self.o_proj = nn.Linear(H * self.head_dim, E, bias=o_bias)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        attn_output, attn_weights = eager_attention_forward(self, query_states, key_states, value_states, attention_mask,
                                                            self.scaling)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output), attn_weights


class LlamaMLP(nn.Module):
    def __init__(self, config, bias):
        super().__init__()
        E, I = config["hidden_size"], config["intermediate_size"]
        self.gate_proj = nn.Linear(E, I, bias=bias)
        self.up_proj = nn.Linear(E, I, bias=bias)
        self.down_proj = nn.Linear(I, E, bias=bias)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, biases):
        super().__init__()
        self.self_attn = LlamaAttention(config, layer_idx, biases["qkv"], biases["o"])
        self.mlp = LlamaMLP(config, biases["mlp"])
        self.input_layernorm = LlamaRMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        self.post_attention_layernorm = LlamaRMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])

    def forward(self, hidden_states, attention_mask, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, attn_weights = self.self_attn(hidden_states, position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states, attn_weights


def biases_of(config):
    """Which linear layers have biases, as each family's modeling file builds them."""
    if config["model_type"] == "qwen2":
        return {"qkv": True, "o": False, "mlp": False}
    if config["model_type"] == "mistral":
        return {"qkv": False, "o": False, "mlp": False}
    return {"qkv": config.get("attention_bias", False), "o": config.get("attention_bias", False),
            "mlp": config.get("mlp_bias", False)}


def sliding_window_of(config, layer_idx):
    """The window of layer layer_idx (None: full causal attention)."""
    if config["model_type"] == "mistral":
        return config.get("sliding_window")
    if config["model_type"] == "qwen2":
        window = config.get("sliding_window") if config.get("use_sliding_window", False) else None
        return window if window is not None and layer_idx >= config.get("max_window_layers", 28) else None
    return None


def causal_mask(T, window, dtype=torch.float32):
    """(1, 1, T, T): 0 where key j is seen from query i (j <= i, and i - window < j), else finfo.min."""
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    seen = j <= i
    if window is not None:
        seen = seen & (j > i - window)
    mask = torch.zeros(T, T, dtype=dtype).masked_fill(~seen, torch.finfo(dtype).min)
    return mask[None, None]


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config["vocab_size"], config["hidden_size"])
        biases = biases_of(config)
        self.layers = nn.ModuleList([LlamaDecoderLayer(config, i, biases) for i in range(config["num_hidden_layers"])])
        self.norm = LlamaRMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        self.rotary_emb = LlamaRotaryEmbedding(config)

    def forward(self, input_ids):
        inputs_embeds = self.embed_tokens(input_ids)
        T = input_ids.shape[1]
        position_ids = torch.arange(T)[None]
        position_embeddings = self.rotary_emb(inputs_embeds, position_ids)
        hidden_states = inputs_embeds
        attentions, inputs = [], []
        for l, layer in enumerate(self.layers):
            inputs.append(hidden_states)
            hidden_states, weights = layer(hidden_states, causal_mask(T, sliding_window_of(self.config, l)), position_embeddings)
            attentions.append(weights)
        return self.norm(hidden_states), attentions, inputs


class LlamaForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)
        if config.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids):
        hidden, attentions, inputs = self.model(input_ids)
        return self.lm_head(hidden), attentions, inputs


# ---------------------------------------------------------------------------------------------
# The independent check: Meta's llama/model.py rotary form on un-permuted weights

def permute(w, n_heads, dim1, dim2):
    """convert_llama_weights_to_hf.py: Meta's interleaved pairs to the halves layout."""
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def unpermute(w, n_heads, dim1, dim2):
    return w.view(n_heads, 2, dim1 // n_heads // 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def meta_first_layer_weights(model, config, x):
    """Layer 0's attention weights (H, T, T) as Meta's code computes them from the normed input x (1, T, E)."""
    layer = model.model.layers[0]
    H, G, hd = config["num_attention_heads"], config["num_key_value_heads"], head_dim_of(config)
    E = config["hidden_size"]
    attn = layer.self_attn
    wq = unpermute(attn.q_proj.weight.detach(), H, H * hd, E)
    wk = unpermute(attn.k_proj.weight.detach(), G, G * hd, E)
    bq = unpermute(attn.q_proj.bias.detach()[:, None], H, H * hd, 1)[:, 0] if attn.q_proj.bias is not None else 0
    bk = unpermute(attn.k_proj.bias.detach()[:, None], G, G * hd, 1)[:, 0] if attn.k_proj.bias is not None else 0
    h = layer.input_layernorm(x)
    T = x.shape[1]
    xq = (h @ wq.T + bq).view(1, T, H, hd)
    xk = (h @ wk.T + bk).view(1, T, G, hd)
    # precompute_freqs_cis with the model's frequencies: e^(i t f)
    freqs = torch.outer(torch.arange(T).float(), model.model.rotary_emb.inv_freq.float())
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)[None, :, None, :]
    xq_ = torch.view_as_complex(xq.float().reshape(1, T, H, -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(1, T, G, -1, 2))
    xq = torch.view_as_real(xq_ * freqs_cis).flatten(3).transpose(1, 2)
    xk = torch.view_as_real(xk_ * freqs_cis).flatten(3).transpose(1, 2)
    xk = torch.repeat_interleave(xk, H // G, dim=1)
    scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(hd)
    scores = scores + causal_mask(T, sliding_window_of(config, 0))
    return torch.softmax(scores.float(), dim=-1)[0]


# ---------------------------------------------------------------------------------------------
# Cases

BASE = {
    "llama": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
              "attention_dropout": 0.0, "hidden_act": "silu", "initializer_range": 0.02, "mlp_bias": False,
              "pretraining_tp": 1, "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
              "use_cache": True, "bos_token_id": None, "eos_token_id": None},
    "mistral": {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "attention_dropout": 0.0,
                "hidden_act": "silu", "initializer_range": 0.02, "rope_theta": 10000.0, "tie_word_embeddings": False,
                "use_cache": True},
    "qwen2": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "attention_dropout": 0.0,
              "hidden_act": "silu", "initializer_range": 0.02, "rope_theta": 1000000.0, "tie_word_embeddings": True,
              "use_cache": True, "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2},
}
SIZES = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
         "torch_dtype": "float32", "transformers_version": "4.46.0"}

# name, family, config changes, dtypes, seed
CASES = [
    # G = 2 of H = 4, theta 1e4, untied; every dtype
    ("llama-gqa", "llama", {}, ["F32", "F16", "BF16"], 11),
    # G = 1, head_dim 16 != hidden / H (32 / 4), llama3 scaling with all three bands, theta 5e5, tied
    ("llama-mqa-llama3", "llama",
     {"num_key_value_heads": 1, "head_dim": 16, "rope_theta": 500000.0, "tie_word_embeddings": True,
      "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 64}}, ["F32", "BF16"], 12),
    # G = H, theta 1e6, linear scaling under the old "type" key, biases on attention and feed-forward
    ("llama-linear-bias", "llama",
     {"num_key_value_heads": 4, "rope_theta": 1000000.0, "attention_bias": True, "mlp_bias": True,
      "rope_scaling": {"type": "linear", "factor": 2.0}}, ["F32"], 13),
    # transformers v5's rope_parameters, dynamic (= default within max_position_embeddings), theta 1e5
    ("llama-dynamic-v5", "llama",
     {"rope_scaling": None, "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 100000.0}},
     ["F32"], 14),
    # a sliding window of 4 keys in every layer, G = 2
    ("mistral-window", "mistral", {"sliding_window": 4}, ["F32", "F16"], 15),
    # q/k/v biases, none on o; a window of 3 keys from layer 1 on (max_window_layers 1); tied; G = 1
    ("qwen2-bias-window", "qwen2",
     {"num_key_value_heads": 1, "use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1},
     ["F32", "BF16"], 16),
]


def randomise(model, seed, std):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def make_models():
    with open(os.path.join(OUT, "tokenizer_cases.json"), encoding="utf-8") as f:
        tokenizer_cases = json.load(f)
    with open(os.path.join(TOKENIZERS, "bpe", "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    texts = [c for c in tokenizer_cases["tokenizers"]["bpe"]["cases"] if 0 < len(c["ids"]) <= 24][:2]
    summary = []
    for name, family, changes, dtypes, seed in CASES:
        config = dict(BASE[family])
        config.update(SIZES)
        config.update(changes)
        config = {k: v for k, v in config.items() if not (k == "rope_scaling" and "rope_parameters" in config)}
        config["vocab_size"] = len(tok["model"]["vocab"])
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
        randomise(model, seed, 0.3)
        model.eval()
        tied = {"lm_head.weight"} if config.get("tie_word_embeddings", False) else set()
        directory = os.path.join(OUT, name)
        os.makedirs(directory, exist_ok=True)
        write_json(os.path.join(directory, "config.json"), config)
        write_json(os.path.join(directory, "tokenizer.json"), tok)
        files = {"F32": "model.safetensors", "F16": "model.f16.safetensors", "BF16": "model.bf16.safetensors"}
        master = {k: v.clone() for k, v in model.state_dict().items()}
        state = {k: v for k, v in master.items() if k not in tied}
        golden = {"name": name, "family": family, "config": config, "dtypes": {}}
        if rope_parameters(config)[0] == "llama3":
            golden["llama3_bands"] = llama3_bands(config, _compute_default_rope_parameters(config)[0])
            assert all(n > 0 for n in golden["llama3_bands"].values()), golden["llama3_bands"]
        worst_meta = 0.0
        for dtype in dtypes:
            write_safetensors(os.path.join(directory, files[dtype]), state, dtype)
            model.load_state_dict(master)
            round_to(model, dtype)
            runs = []
            with torch.no_grad():
                for case in texts if dtype == "F32" else texts[:1]:
                    ids = torch.tensor([case["ids"]])
                    logits, attentions, inputs = model(ids)
                    meta = meta_first_layer_weights(model, config, inputs[0])
                    worst_meta = max(worst_meta, float((meta - attentions[0][0]).abs().max()))
                    T = len(case["ids"])
                    positions = [0, T // 2, T - 1]
                    runs.append({"text": case["text"], "ids": case["ids"],
                                 "attentions": [rounded(a[0].flatten().tolist()) for a in attentions],
                                 "logit_positions": positions,
                                 "logits": rounded(logits[0, positions].flatten().tolist())})
            golden["dtypes"][dtype] = {"file": files[dtype], "runs": runs}
        # the rotary convention, checked a second way
        assert worst_meta < 1e-5, f"{name}: Meta's complex rotary form differs by {worst_meta}"
        golden["meta_rotary_check_max_error"] = worst_meta
        write_json(os.path.join(OUT, name + ".golden.json"), golden)
        summary.append(f"{name}: {', '.join(dtypes)}; Meta's rotary form agrees within {worst_meta:.2g}")
    print("\n".join(summary))


if __name__ == "__main__":
    torch.set_num_threads(1)
    make_models()
