#!/usr/bin/python3
"""Writes golden reference cases for the attention core from real torch.nn.MultiheadAttention calls.

Usage:
    /usr/bin/python3 scripts/reference/gen_golden.py [OUT_DIR] [--large] [--clean]
                                                     [--only SUBSTRING] [--random COUNT]

OUT_DIR defaults to tests/golden/cases/. Every case is one JSON file (the format of the project's
golden cases; see tests/golden/README.md). --large adds full-precision cases with E = 256 and 512
(several MB each: for local runs, not for the repository). --clean removes *.json in OUT_DIR first.

How the expected values are obtained:
  * Plain MHA: nn.MultiheadAttention in train mode with dropout 0, which keeps torch 1.13 on the
    explicit path (its fused path turns float key_padding_masks into bool and crashes with
    bias=False).
  * Grouped-query attention (num_kv_heads G < H): nn.MultiheadAttention with H heads whose key and
    value projections (and bias_k / bias_v / in-projection biases) are the G kv heads'
    repeat_interleave'd H/G times: kv head g serves query heads g*H/G .. (g+1)*H/G - 1, the
    grouping of F.scaled_dot_product_attention(enable_gqa=True). The file holds the G-head weights.
  * is_causal: the file has attn_mask null; torch 1.13 has no is_causal on MHA, so torch gets the
    bool mask triu(ones(L, S), 1) (query i sees keys j <= i).
  * Mask merging follows PyTorch >= 2.0: a bool mask becomes 0 / -inf, a float mask is added as
    it is, and both masks are summed. torch 1.13 errors or logical-ors when a float
    key_padding_mask meets an attn_mask; for those cases both masks are merged here into one
    float (N*H, L, S) attn_mask which torch gets instead (the file keeps both masks as given).
Every expected value is also recomputed in float64 by an independent explicit implementation
(reference() below, written from the SDPA semantics, with G kv heads); the two must agree to 1e-5
(outputs: relative to their largest magnitude when above 1), or the generator stops.

Parameters and inputs are rounded to 3 significant digits before torch sees them, so the file
holds exactly the values torch used, in few bytes; the E = 512 case has weights in {-1, 0, 1}
(a full-precision E = 512 state dict is about 13 MB of JSON). Expected values have 8 significant
digits; NaN (a query row whose every key is masked) is written as null. --random COUNT (default
20) sets the number of random combinations of options.
"""
import argparse
import json
import math
import os
import random
import sys

import torch
import torch.nn.functional as F

TOLERANCE = {"atol": 1e-4, "rtol": 0.0, "weights_atol": 1e-5}
INPUT_DIGITS = 3
EXPECTED_DIGITS = 8
BIG_NEGATIVE = -1e9  # a finite "forbid" value for float masks (JSON has no -Infinity)


# ---------------------------------------------------------------------------------------------
# Small helpers


def rounded(t, digits=INPUT_DIGITS):
    """t rounded to `digits` significant decimal digits, as float32."""
    flat = [float('%.*g' % (digits, v)) for v in t.detach().reshape(-1).tolist()]
    return torch.tensor(flat, dtype=torch.float32).reshape(t.shape)


def tensor_json(t, digits):
    if t is None:
        return None
    if t.dtype == torch.bool:
        data = '[' + ','.join('1' if v else '0' for v in t.reshape(-1).tolist()) + ']'
        dtype = 'bool'
    else:
        parts = []
        for v in t.detach().reshape(-1).tolist():
            if math.isnan(v):
                parts.append('null')
            elif math.isinf(v):
                raise ValueError('infinite value cannot be written to JSON')
            else:
                parts.append('%.*g' % (digits, v))
        data = '[' + ','.join(parts) + ']'
        dtype = 'float32'
    return {"shape": list(t.shape), "dtype": dtype, "data": RawJson(data)}


class RawJson(str):
    pass


def dumps_case(case):
    """json.dumps, with RawJson strings spliced in unquoted (compact number arrays)."""
    raws = []

    def walk(obj):
        if isinstance(obj, RawJson):
            raws.append(str(obj))
            return '@@RAW%d@@' % (len(raws) - 1)
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        return obj

    text = json.dumps(walk(case), separators=(',', ':'), allow_nan=False)
    for i, raw in enumerate(raws):
        text = text.replace('"@@RAW%d@@"' % i, raw, 1)
    return text


def mask_to_float(mask):
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=torch.float32).masked_fill(mask, float('-inf'))
    return mask


def merged_mask(attn_mask, key_padding_mask, n, h, l, s):
    """PyTorch >= 2.0 merging: one float (N*H, L, S) mask, or None."""
    merged = torch.zeros(n * h, l, s)
    if attn_mask is None and key_padding_mask is None:
        return None
    if attn_mask is not None:
        merged = merged + mask_to_float(attn_mask).expand(n * h, l, s)
    if key_padding_mask is not None:
        kpm = mask_to_float(key_padding_mask).reshape(n, 1, 1, s).expand(n, h, 1, s)
        merged = merged + kpm.reshape(n * h, 1, s)
    return merged


# ---------------------------------------------------------------------------------------------
# An independent explicit implementation (SDPA semantics, G kv heads), used as a cross-check.


def reference(cfg, sd, query, key, value, key_padding_mask, attn_mask, is_causal, need_weights,
              average_attn_weights):
    E, H, G = cfg['embed_dim'], cfg['num_heads'], cfg['num_kv_heads']
    hd = E // H
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    elif cfg['batch_first']:
        query, key, value = (x.transpose(0, 1) for x in (query, key, value))
    L, N, _ = query.shape
    S = key.shape[0]
    if 'in_proj_weight' in sd:
        wq, wk, wv = sd['in_proj_weight'].split([E, G * hd, G * hd])
    else:
        wq, wk, wv = sd['q_proj_weight'], sd['k_proj_weight'], sd['v_proj_weight']
    bq = bk = bv = None
    if 'in_proj_bias' in sd:
        bq, bk, bv = sd['in_proj_bias'].split([E, G * hd, G * hd])
    d = torch.float64
    q = F.linear(query.to(d), wq.to(d), None if bq is None else bq.to(d))  # (L, N, E)
    k = F.linear(key.to(d), wk.to(d), None if bk is None else bk.to(d))  # (S, N, G*hd)
    v = F.linear(value.to(d), wv.to(d), None if bv is None else bv.to(d))
    if attn_mask is None and is_causal:
        attn_mask = torch.ones(L, S, dtype=torch.bool).triu(1)
    mask = merged_mask(attn_mask, key_padding_mask, N, H, L, S)  # (N*H, L, S) or None
    if mask is not None:
        mask = mask.to(d).reshape(N, H, L, S)
    if cfg['add_bias_kv']:
        k = torch.cat([k, sd['bias_k'].to(d).expand(1, N, G * hd)])
        v = torch.cat([v, sd['bias_v'].to(d).expand(1, N, G * hd)])
        if mask is not None:
            mask = F.pad(mask, (0, 1))
    qh = q.reshape(L, N, H, hd).permute(1, 2, 0, 3)  # (N, H, L, hd)
    kh = k.reshape(-1, N, G, hd).permute(1, 2, 0, 3)  # (N, G, S', hd)
    vh = v.reshape(-1, N, G, hd).permute(1, 2, 0, 3)
    if cfg['add_zero_attn']:
        kh = torch.cat([kh, torch.zeros(N, G, 1, hd, dtype=d)], dim=2)
        vh = torch.cat([vh, torch.zeros(N, G, 1, hd, dtype=d)], dim=2)
        if mask is not None:
            mask = F.pad(mask, (0, 1))
    kh = kh.repeat_interleave(H // G, dim=1)  # kv head g serves query heads g*H/G .. (g+1)*H/G-1
    vh = vh.repeat_interleave(H // G, dim=1)
    scores = (qh / math.sqrt(hd)) @ kh.transpose(-2, -1)  # (N, H, L, S')
    if mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    ctx = (weights @ vh).permute(2, 0, 1, 3).reshape(L, N, E)
    out = F.linear(ctx, sd['out_proj.weight'].to(d),
                   sd['out_proj.bias'].to(d) if 'out_proj.bias' in sd else None)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    elif cfg['batch_first']:
        out = out.transpose(0, 1)
    return out.float(), (weights.float() if need_weights else None)


def max_diff(a, b):
    if a is None or b is None:
        assert a is None and b is None, 'one of the tensors is missing'
        return 0.0
    assert a.shape == b.shape, (a.shape, b.shape)
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    assert torch.equal(nan_a, nan_b), 'NaN positions differ'
    if nan_a.all():
        return 0.0
    return (a[~nan_a] - b[~nan_b]).abs().max().item()


# ---------------------------------------------------------------------------------------------
# One case


def make_case(name, description, *, seed, E, H, G=None, kdim=None, vdim=None, bias=True,
              add_bias_kv=False, add_zero_attn=False, batch_first=False, N=2, L=4, S=None,
              self_attention=None, kpm=None, mask=None, need_weights=True, average=True,
              causal=False, masked_rows=None, masked_batches=None, ternary=False, digits=None,
              input_scale=1.0):
    """kpm: None | 'bool' | 'float'; mask: None | 'bool2d' | 'float2d' | 'bool3d' | 'float3d'.
    N None means unbatched. masked_rows: list of (n, h, l) whose every key the attn_mask forbids
    (needs a 3-D bool mask). masked_batches: batch indices whose every key the kpm (bool) ignores.
    ternary: weights in {-1, 0, 1} (compact files at large E)."""
    G = G or H
    kdim = kdim or E
    vdim = vdim or E
    S = S or L
    if self_attention is None:
        self_attention = kdim == E and vdim == E and S == L
    assert not self_attention or (kdim == E and vdim == E and S == L)
    hd = E // H
    gen = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    digits = digits or INPUT_DIGITS

    def randn(*shape, scale=1.0):
        return rounded(torch.randn(*shape, generator=gen) * scale, digits)

    # Parameters: torch's default initialisation (seeded), then nonzero biases so they matter.
    torch.manual_seed(seed)
    tmpl = torch.nn.MultiheadAttention(E, H, dropout=0.0, bias=bias, add_bias_kv=add_bias_kv,
                                       add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim)
    sd = {}
    if ternary:
        def tern(*shape):  # -1, 0, 1 with probabilities 0.15, 0.7, 0.15
            u = torch.rand(*shape, generator=gen)
            return (u > 0.85).float() - (u < 0.15).float()
        wq, wk, wv, wo = tern(E, E), tern(G * hd, kdim), tern(G * hd, vdim), tern(E, E)
    else:
        if tmpl._qkv_same_embed_dim:
            wq, wk_full, wv_full = tmpl.in_proj_weight.detach().split(E)
        else:
            wq, wk_full, wv_full = (tmpl.q_proj_weight.detach(), tmpl.k_proj_weight.detach(),
                                    tmpl.v_proj_weight.detach())
        wk, wv = wk_full[:G * hd], wv_full[:G * hd]
        if G != H:
            # Fresh xavier_uniform for the narrower (G*hd, kdim) projections, as their own
            # parameters would get.
            wk = torch.nn.init.xavier_uniform_(torch.empty(G * hd, kdim))
            wv = torch.nn.init.xavier_uniform_(torch.empty(G * hd, vdim))
        wo = tmpl.out_proj.weight.detach()
    if G == H and kdim == E and vdim == E:
        sd['in_proj_weight'] = rounded(torch.cat([wq, wk, wv]), digits)
    else:
        sd['q_proj_weight'] = rounded(wq, digits)
        sd['k_proj_weight'] = rounded(wk, digits)
        sd['v_proj_weight'] = rounded(wv, digits)
    if bias:
        sd['in_proj_bias'] = randn(E + 2 * G * hd, scale=0.1)
    if add_bias_kv:
        sd['bias_k'] = rounded(tmpl.bias_k.detach()[..., :G * hd], digits)
        sd['bias_v'] = rounded(tmpl.bias_v.detach()[..., :G * hd], digits)
    sd['out_proj.weight'] = rounded(wo, digits)
    if bias:
        sd['out_proj.bias'] = randn(E, scale=0.1)

    # Inputs.
    def seq_shape(length, width):
        if N is None:
            return (length, width)
        return (N, length, width) if batch_first else (length, N, width)

    query = randn(*seq_shape(L, E), scale=input_scale)
    if self_attention:
        key = value = query
    else:
        key = randn(*seq_shape(S, kdim), scale=input_scale)
        value = randn(*seq_shape(S, vdim), scale=input_scale)
    n = 1 if N is None else N

    key_padding_mask = None
    if kpm == 'bool':
        key_padding_mask = torch.rand(n, S, generator=gen) < 0.3
        for b in range(n):  # at least one key per batch element stays visible
            key_padding_mask[b, rng.randrange(S)] = False
        for b in masked_batches or []:
            key_padding_mask[b] = True
    elif kpm == 'float':
        key_padding_mask = randn(n, S)
        forbid = torch.rand(n, S, generator=gen) < 0.2
        for b in range(n):
            forbid[b, rng.randrange(S)] = False
        key_padding_mask = key_padding_mask.masked_fill(forbid, BIG_NEGATIVE)
    if key_padding_mask is not None and N is None:
        key_padding_mask = key_padding_mask[0]

    attn_mask = None
    if mask is not None:
        shape = (L, S) if mask.endswith('2d') else (n * H, L, S)
        if mask.startswith('bool'):
            attn_mask = torch.rand(*shape, generator=gen) < 0.3
            flat = attn_mask.reshape(-1, L, S)
            for m in range(flat.shape[0]):
                for i in range(L):
                    flat[m, i, rng.randrange(S)] = False
            for (b, h, i) in masked_rows or []:
                flat[b * H + h, i, :] = True
            attn_mask = flat.reshape(shape)
        else:
            attn_mask = randn(*shape)
            forbid = torch.rand(*shape, generator=gen) < 0.15
            flat = forbid.reshape(-1, L, S)
            for m in range(flat.shape[0]):
                for i in range(L):
                    flat[m, i, rng.randrange(S)] = False
            attn_mask = attn_mask.masked_fill(flat.reshape(shape), BIG_NEGATIVE)
    assert not (causal and attn_mask is not None), 'is_causal cases carry no attn_mask'

    cfg = {"embed_dim": E, "num_heads": H, "num_kv_heads": G, "kdim": kdim, "vdim": vdim,
           "bias": bias, "add_bias_kv": add_bias_kv, "add_zero_attn": add_zero_attn,
           "batch_first": batch_first}

    # The torch call: an nn.MultiheadAttention with H heads; for G < H its k/v weights are the
    # kv heads' repeat_interleave'd.
    def expand_heads(t, dim):  # (.., G*hd, ..) along dim -> (.., H*hd, ..)
        shape = list(t.shape)
        t = t.reshape(shape[:dim] + [G, hd] + shape[dim + 1:])
        t = t.repeat_interleave(H // G, dim=dim)
        return t.reshape(shape[:dim] + [H * hd] + shape[dim + 1:])

    mha = torch.nn.MultiheadAttention(E, H, dropout=0.0, bias=bias, add_bias_kv=add_bias_kv,
                                      add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim,
                                      batch_first=batch_first)
    mha.train()
    with torch.no_grad():
        if 'in_proj_weight' in sd:
            mha.in_proj_weight.copy_(sd['in_proj_weight'])
        else:
            q_w, k_w, v_w = sd['q_proj_weight'], sd['k_proj_weight'], sd['v_proj_weight']
            k_w, v_w = expand_heads(k_w, 0), expand_heads(v_w, 0)
            if mha._qkv_same_embed_dim:
                mha.in_proj_weight.copy_(torch.cat([q_w, k_w, v_w]))
            else:
                mha.q_proj_weight.copy_(q_w)
                mha.k_proj_weight.copy_(k_w)
                mha.v_proj_weight.copy_(v_w)
        if bias:
            b_q, b_k, b_v = sd['in_proj_bias'].split([E, G * hd, G * hd])
            mha.in_proj_bias.copy_(torch.cat([b_q, expand_heads(b_k, 0), expand_heads(b_v, 0)]))
            mha.out_proj.bias.copy_(sd['out_proj.bias'])
        if add_bias_kv:
            mha.bias_k.copy_(expand_heads(sd['bias_k'], 2))
            mha.bias_v.copy_(expand_heads(sd['bias_v'], 2))
        mha.out_proj.weight.copy_(sd['out_proj.weight'])

    torch_attn_mask, torch_kpm = attn_mask, key_padding_mask
    if causal:
        torch_attn_mask = torch.ones(L, S, dtype=torch.bool).triu(1)
    merged_by_hand = (torch_kpm is not None and torch_kpm.dtype != torch.bool
                      and torch_attn_mask is not None)
    if merged_by_hand:
        kpm_b = torch_kpm if N is not None else torch_kpm.unsqueeze(0)
        torch_attn_mask = merged_mask(torch_attn_mask, kpm_b, n, H, L, S)
        torch_kpm = None
    with torch.no_grad():
        out, weights = mha(query, key, value, key_padding_mask=torch_kpm, need_weights=need_weights,
                           attn_mask=torch_attn_mask, average_attn_weights=average)
    if not need_weights:
        assert weights is None

    ref_out, ref_w = reference(cfg, sd, query, key, value, key_padding_mask, attn_mask, causal,
                               need_weights, average)
    d_out, d_w = max_diff(out, ref_out), max_diff(weights, ref_w)
    out_scale = max(1.0, out[~torch.isnan(out)].abs().max().item() if not torch.isnan(out).all() else 1.0)
    # Semantic slips show as errors near 1e-2; float32 rounding in torch stays far below these.
    if d_out > 1e-5 * out_scale or d_w > 1e-5:
        raise SystemExit('%s: torch and the explicit reference disagree: output %.3g, weights %.3g'
                         % (name, d_out, d_w))

    digits_expected = EXPECTED_DIGITS
    case = {
        "name": name,
        "description": description,
        "config": cfg,
        "state_dict": {k: tensor_json(v, digits) for k, v in sd.items()},
        "inputs": {
            "query": tensor_json(query, digits),
            "key": tensor_json(key, digits),
            "value": tensor_json(value, digits),
            "key_padding_mask": tensor_json(key_padding_mask, digits),
            "attn_mask": tensor_json(attn_mask, digits),
        },
        "options": {"need_weights": need_weights, "average_attn_weights": average,
                    "is_causal": causal},
        "expected": {"output": tensor_json(out, digits_expected),
                     "weights": tensor_json(weights, digits_expected)},
        "tolerance": dict(TOLERANCE),
        "reference": {
            "torch_version": torch.__version__,
            "path": "nn.MultiheadAttention, train mode, dropout 0 (explicit path)"
                    + ("; GQA via kv weights repeat_interleave'd to H heads" if G != H else "")
                    + ("; causal mask passed as attn_mask" if causal else "")
                    + ("; masks merged by hand into one float (N*H, L, S) attn_mask" if merged_by_hand else ""),
            "float64_explicit_max_abs_diff": {"output": d_out, "weights": d_w},
            "seed": seed,
        },
    }
    return case


# ---------------------------------------------------------------------------------------------
# The case list


def fixed_cases():
    c = []

    def add(name, description, **kw):
        c.append((name, description, kw))

    add('self_default', 'self-attention, PyTorch defaults (sequence-first)', E=16, H=4, N=2, L=5)
    add('self_batch_first', 'self-attention, batch_first', E=8, H=2, N=3, L=4, batch_first=True)
    add('single_head', 'one head, batch_first', E=8, H=1, N=2, L=3, batch_first=True)
    add('one_token', 'L = S = 1', E=8, H=2, N=2, L=1, batch_first=True)
    add('cross_kdim_vdim', 'cross-attention, kdim 10, vdim 6, S != L, batch_first',
        E=16, H=2, kdim=10, vdim=6, N=2, L=4, S=7, batch_first=True)
    add('cross_seq_first', 'cross-attention, kdim/vdim != E, sequence-first',
        E=12, H=3, kdim=5, vdim=7, N=2, L=3, S=6)
    add('cross_same_dims', 'cross-attention with kdim = vdim = E (packed weights), S < L',
        E=8, H=2, N=2, L=6, S=3, batch_first=True)
    add('unbatched', 'unbatched (2-D) self-attention', E=8, H=2, N=None, L=5)
    add('unbatched_cross_masks', 'unbatched cross-attention, bool kpm (S) and float 3-D mask (H, L, S)',
        E=8, H=2, kdim=6, vdim=9, N=None, L=3, S=5, kpm='bool', mask='float3d')
    add('unbatched_float_kpm_bool_mask', 'unbatched, float kpm + bool 2-D attn_mask (merged)',
        E=8, H=2, N=None, L=4, S=4, kpm='float', mask='bool2d')
    add('no_bias', 'bias=False', E=8, H=2, N=2, L=4, batch_first=True)
    add('no_bias_cross', 'bias=False, cross-attention with kdim/vdim', E=16, H=2, kdim=4, vdim=12,
        N=2, L=3, S=5, bias=False)
    add('bias_kv', 'add_bias_kv alone', E=8, H=2, N=2, L=4, add_bias_kv=True)
    add('zero_attn', 'add_zero_attn alone', E=8, H=2, N=2, L=4, add_zero_attn=True, batch_first=True)
    add('bias_kv_zero_attn', 'add_bias_kv with add_zero_attn', E=16, H=4, N=2, L=4,
        add_bias_kv=True, add_zero_attn=True)
    add('bias_kv_zero_attn_no_bias', 'add_bias_kv + add_zero_attn with bias=False, cross',
        E=16, H=2, kdim=6, vdim=6, N=2, L=3, S=4, bias=False, add_bias_kv=True,
        add_zero_attn=True, batch_first=True)
    add('bias_kv_zero_attn_masks', 'add_bias_kv + add_zero_attn with bool kpm and float 3-D mask (padded)',
        E=8, H=2, N=2, L=4, S=5, kdim=8, vdim=8, add_bias_kv=True, add_zero_attn=True,
        kpm='bool', mask='float3d')
    add('kpm_bool', 'key_padding_mask bool', E=8, H=2, N=3, L=5, kpm='bool', batch_first=True)
    add('kpm_float', 'key_padding_mask float (added)', E=8, H=2, N=3, L=5, kpm='float')
    add('mask_bool_2d', 'attn_mask bool (L, S)', E=8, H=2, N=2, L=5, mask='bool2d')
    add('mask_float_2d', 'attn_mask float (L, S)', E=8, H=2, N=2, L=4, S=6, kdim=8, vdim=8,
        mask='float2d', batch_first=True)
    add('mask_bool_3d', 'attn_mask bool (N*H, L, S)', E=8, H=2, N=2, L=4, mask='bool3d',
        batch_first=True)
    add('mask_float_3d', 'attn_mask float (N*H, L, S)', E=8, H=2, N=2, L=4, S=3, kdim=16,
        vdim=16, self_attention=False, mask='float3d')
    add('masks_bool_bool', 'bool kpm + bool 2-D attn_mask', E=8, H=2, N=2, L=5, kpm='bool',
        mask='bool2d')
    add('masks_bool_float3d', 'bool kpm + float 3-D attn_mask', E=8, H=2, N=2, L=4, kpm='bool',
        mask='float3d', batch_first=True)
    add('masks_float_bool', 'float kpm + bool 2-D attn_mask (merged, PyTorch 2 semantics)',
        E=8, H=2, N=2, L=4, kpm='float', mask='bool2d', batch_first=True)
    add('masks_float_float', 'float kpm + float 2-D attn_mask (merged)', E=8, H=2, N=2, L=4,
        kpm='float', mask='float2d')
    add('masks_float_bool3d', 'float kpm + bool 3-D attn_mask (merged)', E=16, H=2, N=2, L=3,
        S=5, kdim=7, vdim=5, kpm='float', mask='bool3d')
    add('masks_float_float3d_per_head', 'float kpm + float 3-D attn_mask, per-head weights',
        E=16, H=4, N=2, L=4, kpm='float', mask='float3d', average=False, batch_first=True)
    add('per_head_weights', 'average_attn_weights=False', E=16, H=4, N=2, L=4, average=False)
    add('per_head_unbatched', 'average_attn_weights=False, unbatched', E=8, H=2, N=None, L=4,
        average=False)
    add('need_weights_false', 'need_weights=False (weights null)', E=8, H=2, N=2, L=4,
        need_weights=False, batch_first=True)
    add('need_weights_false_masks', 'need_weights=False with float kpm and bool 3-D mask',
        E=8, H=2, N=2, L=4, kpm='float', mask='bool3d', need_weights=False)
    add('gqa_kv2', 'GQA: H 8, num_kv_heads 2', E=32, H=8, G=2, N=2, L=4, batch_first=True)
    add('gqa_kv4', 'GQA: H 8, num_kv_heads 4', E=16, H=8, G=4, N=2, L=4)
    add('mqa_kv1', 'MQA: H 8, num_kv_heads 1', E=16, H=8, G=1, N=2, L=4, batch_first=True)
    add('gqa_kv2_per_head', 'GQA kv 2, per-head weights', E=16, H=8, G=2, N=2, L=3,
        average=False, batch_first=True)
    add('gqa_kv4_cross_masks', 'GQA kv 4, cross kdim/vdim, bool kpm, float 3-D mask',
        E=16, H=8, G=4, kdim=12, vdim=20, N=2, L=3, S=5, kpm='bool', mask='float3d')
    add('gqa_kv2_bias_kv_zero_attn', 'GQA kv 2, add_bias_kv + add_zero_attn, float kpm',
        E=16, H=8, G=2, N=2, L=3, add_bias_kv=True, add_zero_attn=True, kpm='float',
        batch_first=True)
    add('mqa_unbatched_no_bias', 'MQA, unbatched, bias=False', E=16, H=8, G=1, N=None, L=4,
        bias=False)
    add('causal', 'is_causal (attn_mask null)', E=16, H=4, N=2, L=5, causal=True, batch_first=True)
    add('causal_seq_first_kpm_float', 'is_causal with float kpm', E=8, H=2, N=2, L=4,
        causal=True, kpm='float')
    add('causal_cross', 'is_causal, cross-attention L 3, S 5', E=16, H=2, kdim=8, vdim=8, N=2,
        L=3, S=5, causal=True, batch_first=True)
    add('causal_gqa_per_head', 'is_causal, GQA kv 2, per-head weights', E=16, H=8, G=2, N=1,
        L=4, causal=True, average=False, batch_first=True)
    add('causal_bias_kv_zero_attn', 'is_causal with add_bias_kv + add_zero_attn', E=8, H=2, N=2,
        L=4, causal=True, add_bias_kv=True, add_zero_attn=True)
    add('causal_unbatched', 'is_causal, unbatched', E=8, H=2, N=None, L=4, causal=True)
    add('fully_masked_row_per_head', 'one head row fully masked by a bool 3-D mask: NaN',
        E=16, H=4, N=2, L=4, mask='bool3d', masked_rows=[(1, 2, 1)], average=False,
        batch_first=True)
    add('fully_masked_row_averaged', 'one head row fully masked: NaN in averaged weights',
        E=8, H=2, N=2, L=4, mask='bool3d', masked_rows=[(0, 0, 3)])
    add('fully_masked_batch_kpm', 'a batch element with every key padded: NaN',
        E=8, H=2, N=2, L=3, kpm='bool', masked_batches=[1], batch_first=True)
    add('e512_ternary', 'E 512, H 8 (hd 64), kdim = vdim = 16; weights in {-1, 0, 1}, '
        'small inputs, float kpm', E=512, H=8, kdim=16, vdim=16, N=1, L=3, S=4, kpm='float',
        ternary=True, input_scale=0.05, batch_first=True)
    return c


def random_cases(count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        H = rng.choice([1, 2, 4, 8])
        hd = rng.choice([1, 2, 3])
        E = H * hd
        G = rng.choice([g for g in range(1, H + 1) if H % g == 0])
        cross = rng.random() < 0.5
        if cross:
            kdim = rng.randint(1, 12) if rng.random() < 0.7 else E
            vdim = rng.randint(1, 12) if rng.random() < 0.7 else E
        else:
            kdim = vdim = E
        N = rng.choice([None, 1, 2, 3])
        L = rng.randint(1, 6)
        S = rng.randint(1, 6) if cross else L
        causal = rng.random() < 0.2
        mask = None if causal else rng.choice([None, 'bool2d', 'float2d', 'bool3d', 'float3d'])
        kw = dict(E=E, H=H, G=G, kdim=kdim, vdim=vdim, N=N, L=L, S=S,
                  self_attention=not cross and rng.random() < 0.7,
                  bias=rng.random() < 0.75, add_bias_kv=rng.random() < 0.3,
                  add_zero_attn=rng.random() < 0.3, batch_first=rng.random() < 0.5,
                  kpm=rng.choice([None, 'bool', 'float']), mask=mask,
                  need_weights=rng.random() < 0.85, average=rng.random() < 0.5, causal=causal,
                  seed=1000 + i)
        desc = 'random combination %d: %s' % (i, ', '.join(
            '%s=%s' % (k, v) for k, v in kw.items() if k != 'seed'))
        out.append(('random_%02d' % i, desc, kw))
    return out


def large_cases():
    return [
        ('large_e512_packed', 'E 512, H 8, packed in_proj_weight, default init, full precision',
         dict(E=512, H=8, N=2, L=6, kpm='bool', mask='float2d', batch_first=True, digits=8)),
        ('large_e512_gqa', 'E 512, H 8, num_kv_heads 2, per-head weights, full precision',
         dict(E=512, H=8, G=2, N=1, L=5, average=False, causal=True, digits=8)),
        ('large_e256_cross', 'E 256, H 4, kdim 100, vdim 300, float kpm + bool 3-D mask',
         dict(E=256, H=4, kdim=100, vdim=300, N=2, L=4, S=7, kpm='float', mask='bool3d',
              add_bias_kv=True, add_zero_attn=True, digits=8)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir', nargs='?', default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'golden', 'cases'))
    parser.add_argument('--large', action='store_true', help='also write E 256/512 full-precision cases')
    parser.add_argument('--clean', action='store_true', help='remove *.json in OUT_DIR first')
    parser.add_argument('--only', default=None, help='only cases whose name contains this')
    parser.add_argument('--random', type=int, default=20, help="number of random combinations")
    args = parser.parse_args()

    torch.set_num_threads(1)
    os.makedirs(args.out_dir, exist_ok=True)
    if args.clean:
        for f in os.listdir(args.out_dir):
            if f.endswith('.json'):
                os.remove(os.path.join(args.out_dir, f))
    specs = fixed_cases() + random_cases(args.random, seed=20240601)
    if args.large:
        specs += large_cases()
    total = 0
    for index, (name, description, kw) in enumerate(specs):
        if args.only and args.only not in name:
            continue
        kw = dict(kw)
        kw.setdefault('seed', index + 1)
        case = make_case(name, description, **kw)
        text = dumps_case(case)
        path = os.path.join(args.out_dir, name + '.json')
        with open(path, 'w') as f:
            f.write(text + '\n')
        total += len(text) + 1
        ref = case['reference']['float64_explicit_max_abs_diff']
        print('%-36s %8d bytes  torch vs float64 explicit: out %.1e  w %.1e'
              % (name, len(text) + 1, ref['output'], ref['weights']))
    print('wrote %d bytes to %s' % (total, os.path.abspath(args.out_dir)))


if __name__ == '__main__':
    sys.exit(main())
