// A plain-JavaScript multi-head attention, written as straight loops in double precision, with
// torch.nn.MultiheadAttention's semantics (the explicit path, need_weights=True):
//
//   q = query W_q^T + b_q            (N, L, E)
//   k = key   W_k^T + b_k            (N, S, G*hd)      v likewise from value
//   bias_k / bias_v appended as one more key/value row (add_bias_kv); masks padded with 0
//   a zero key/value row appended per head (add_zero_attn); masks padded with 0
//   scores[n,h,i,j] = (q[n,i,h] / sqrt(hd)) . k[n,j,g(h)],  g(h) = floor(h / (H / G))
//   + attn_mask (L, S) or (N*H, L, S)   (bool: true -> -inf; float: added)
//   + key_padding_mask (N, S)            (bool: true -> -inf; float: added)
//   is_causal with no attn_mask: j > i -> -inf (only over the S real keys)
//   p = softmax over j (a row with every key at -inf: NaN, or 0 with fullyMaskedRowsZero)
//   head[n,h,i] = sum_j p[n,h,i,j] v[n,j,g(h)];  heads in ablateHeads set to 0
//   output = concat W_o^T + b_o, or concat when skipOutProj
//   weights averaged over heads (N, L, S') or per head (N, H, L, S')
//
// Layouts: batchFirst (N, L, E), otherwise (L, N, E); a 2-D query is unbatched (L, E).
// Nothing here is clever, so that it can be checked by reading.

/** Reads a (N, T, D) view out of a batch-first, sequence-first or unbatched tensor. */
function toBatchFirst(tensor, batched, batchFirst) {
  const { data, shape } = tensor;
  if (!batched) {
    const [T, D] = shape;
    return { N: 1, T, D, at: (n, t, d) => data[t * D + d] };
  }
  if (batchFirst) {
    const [N, T, D] = shape;
    return { N, T, D, at: (n, t, d) => data[(n * T + t) * D + d] };
  }
  const [T, N, D] = shape;
  return { N, T, D, at: (n, t, d) => data[(t * N + n) * D + d] };
}

function maskValue(mask, index) {
  const value = mask.data[index];
  if (mask.dtype === 'bool') return value ? -Infinity : 0;
  return Number(value);
}

/**
 * @param config  { embedDim, numHeads, numKvHeads?, kdim?, vdim?, bias, addBiasKv, addZeroAttn, batchFirst }
 * @param params  PyTorch state_dict names -> { data, shape } (in_proj_weight or q/k/v_proj_weight, …)
 * @param input   { query, key?, value?, keyPaddingMask?, attnMask?, needWeights?, averageAttnWeights?,
 *                  isCausal?, fullyMaskedRowsZero?, ablateHeads?, skipOutProj? } (masks need dtype)
 * @returns { output, weights, headOutputs, concat } as { data: Float64Array, shape }
 */
export function referenceForward(config, params, input) {
  const E = config.embedDim;
  const H = config.numHeads;
  const G = config.numKvHeads || H;
  const hd = E / H;
  const kdim = config.kdim || E;
  const vdim = config.vdim || E;
  const kv = G * hd;
  const batchFirst = Boolean(config.batchFirst);

  const query = input.query;
  const key = input.key ?? query;
  const value = input.value ?? key;
  const batched = query.shape.length === 3;
  const q_in = toBatchFirst(query, batched, batchFirst);
  const k_in = toBatchFirst(key, batched, batchFirst);
  const v_in = toBatchFirst(value, batched, batchFirst);
  const N = q_in.N;
  const L = q_in.T;
  const S = k_in.T;

  // Projection weights as (rows, cols) accessors.
  let wq, wk, wv;
  if (params.in_proj_weight) {
    const w = params.in_proj_weight.data;  // (3E, E)
    wq = (r, c) => w[r * E + c];
    wk = (r, c) => w[(E + r) * E + c];
    wv = (r, c) => w[(2 * E + r) * E + c];
  } else {
    wq = (r, c) => params.q_proj_weight.data[r * E + c];
    wk = (r, c) => params.k_proj_weight.data[r * kdim + c];
    wv = (r, c) => params.v_proj_weight.data[r * vdim + c];
  }
  const inBias = params.in_proj_bias ? params.in_proj_bias.data : null;  // (E + 2 kv)
  const bq = (r) => (inBias ? inBias[r] : 0);
  const bk = (r) => (inBias ? inBias[E + r] : 0);
  const bv = (r) => (inBias ? inBias[E + kv + r] : 0);

  // 1. Projections: q (N, L, E), k and v (N, S', kv) with the extra rows appended.
  const q = [];
  const k = [];
  const v = [];
  for (let n = 0; n < N; ++n) {
    const qn = [];
    for (let l = 0; l < L; ++l) {
      const row = new Float64Array(E);
      for (let r = 0; r < E; ++r) {
        let sum = bq(r);
        for (let c = 0; c < E; ++c) sum += wq(r, c) * q_in.at(n, l, c);
        row[r] = sum;
      }
      qn.push(row);
    }
    q.push(qn);
    const kn = [];
    const vn = [];
    for (let s = 0; s < S; ++s) {
      const krow = new Float64Array(kv);
      const vrow = new Float64Array(kv);
      for (let r = 0; r < kv; ++r) {
        let ks = bk(r);
        for (let c = 0; c < kdim; ++c) ks += wk(r, c) * k_in.at(n, s, c);
        krow[r] = ks;
        let vs = bv(r);
        for (let c = 0; c < vdim; ++c) vs += wv(r, c) * v_in.at(n, s, c);
        vrow[r] = vs;
      }
      kn.push(krow);
      vn.push(vrow);
    }
    if (config.addBiasKv) {
      kn.push(Float64Array.from(params.bias_k.data));
      vn.push(Float64Array.from(params.bias_v.data));
    }
    if (config.addZeroAttn) {
      kn.push(new Float64Array(kv));
      vn.push(new Float64Array(kv));
    }
    k.push(kn);
    v.push(vn);
  }
  const St = k[0].length;  // S plus the appended rows

  // 2. Masks, as one additive value per (n, h, i, j) over the S real keys; padded columns get 0.
  const attnMask = input.attnMask ?? null;
  const kpm = input.keyPaddingMask ?? null;
  const causal = Boolean(input.isCausal) && !attnMask;
  const maskAt = (n, h, i, j) => {
    if (j >= S) return 0;
    let m = 0;
    if (attnMask) {
      const index = attnMask.shape.length === 3 ? ((n * H + h) * L + i) * S + j : i * S + j;
      m += maskValue(attnMask, index);
    }
    if (kpm) m += maskValue(kpm, n * S + j);
    if (causal && j > i) m = -Infinity;
    return m;
  };

  // 3. Attention per (n, h).
  const scale = 1 / Math.sqrt(hd);
  const probs = new Float64Array(N * H * L * St);
  const concat = new Float64Array(N * L * E);  // batch-first (N, L, E)
  const headsPerKv = H / G;
  const ablated = new Set(input.ablateHeads ?? []);
  const headOutputs = new Float64Array(N * H * L * hd);
  for (let n = 0; n < N; ++n) {
    for (let h = 0; h < H; ++h) {
      const g = Math.floor(h / headsPerKv);
      for (let i = 0; i < L; ++i) {
        const scores = new Float64Array(St);
        let max = -Infinity;
        for (let j = 0; j < St; ++j) {
          let dot = 0;
          for (let d = 0; d < hd; ++d) dot += q[n][i][h * hd + d] * scale * k[n][j][g * hd + d];
          scores[j] = dot + maskAt(n, h, i, j);
          if (scores[j] > max) max = scores[j];
        }
        const p = probs.subarray(((n * H + h) * L + i) * St, ((n * H + h) * L + i + 1) * St);
        if (max === -Infinity) {
          p.fill(input.fullyMaskedRowsZero ? 0 : NaN);
        } else {
          let sum = 0;
          for (let j = 0; j < St; ++j) {
            p[j] = Math.exp(scores[j] - max);
            sum += p[j];
          }
          for (let j = 0; j < St; ++j) p[j] /= sum;
        }
        for (let d = 0; d < hd; ++d) {
          let out = 0;
          for (let j = 0; j < St; ++j) out += p[j] * v[n][j][g * hd + d];
          headOutputs[((n * H + h) * L + i) * hd + d] = out;
          concat[(n * L + i) * E + h * hd + d] = ablated.has(h) ? 0 : out;
        }
      }
    }
  }

  // 4. Out-projection.
  const outNle = new Float64Array(N * L * E);
  if (input.skipOutProj) {
    outNle.set(concat);
  } else {
    const wo = params['out_proj.weight'].data;
    const bo = params['out_proj.bias'] ? params['out_proj.bias'].data : null;
    for (let r = 0; r < N * L; ++r) {
      for (let o = 0; o < E; ++o) {
        let sum = bo ? bo[o] : 0;
        for (let c = 0; c < E; ++c) sum += wo[o * E + c] * concat[r * E + c];
        outNle[r * E + o] = sum;
      }
    }
  }

  // 5. Back to the caller's layout.
  const layout = (nle) => {
    if (!batched) return { data: nle, shape: [L, E] };
    if (batchFirst) return { data: nle, shape: [N, L, E] };
    const lne = new Float64Array(N * L * E);
    for (let n = 0; n < N; ++n)
      for (let l = 0; l < L; ++l)
        for (let e = 0; e < E; ++e) lne[(l * N + n) * E + e] = nle[(n * L + l) * E + e];
    return { data: lne, shape: [L, N, E] };
  };

  let weights = null;
  if (input.needWeights ?? true) {
    if (input.averageAttnWeights ?? true) {
      const avg = new Float64Array(N * L * St);
      for (let n = 0; n < N; ++n)
        for (let h = 0; h < H; ++h)
          for (let x = 0; x < L * St; ++x) avg[n * L * St + x] += probs[(n * H + h) * L * St + x] / H;
      weights = { data: avg, shape: batched ? [N, L, St] : [L, St] };
    } else {
      weights = { data: probs, shape: batched ? [N, H, L, St] : [H, L, St] };
    }
  }
  return {
    output: layout(outNle),
    weights,
    headOutputs: { data: headOutputs, shape: batched ? [N, H, L, hd] : [H, L, hd] },
    concat: layout(concat),
  };
}

/**
 * Largest |a - b| over two flat arrays; NaN must sit at the same places in both (a NaN
 * against a number counts as Infinity).
 */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; ++i) {
    const x = a[i];
    const y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
      continue;
    }
    const d = Math.abs(x - y);
    if (d > max) max = d;
  }
  return max;
}
