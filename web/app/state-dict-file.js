// Reading and writing weights as JSON in the golden-case format of tests/golden:
//   { "config": { "embed_dim", "num_heads", ... }?, "state_dict": { name: { "shape", "dtype", "data" } } }
// or a bare state_dict { name: { "shape", "data" } }. Data are row-major lists of numbers.

const KNOWN = new Set(['in_proj_weight', 'in_proj_bias', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight',
  'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias']);

/**
 * Parse a state_dict file for this page, whose token embeddings are `embedDim` wide.
 * @returns {{ config: object, stateDict: Record<string, {data: Float32Array, shape: number[]}> }}
 */
export function parseStateDictJson(text, embedDim) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`The file is not valid JSON: ${error.message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    throw new Error(`Expected a JSON object (a state_dict, or {"state_dict": …}), got ${Array.isArray(json) ? 'an array' : typeof json}.`);
  }
  const raw = json.state_dict && typeof json.state_dict === 'object' ? json.state_dict : json;
  const names = Object.keys(raw).filter((k) => k !== 'config');
  const unknown = names.filter((k) => !KNOWN.has(k));
  if (unknown.length) {
    throw new Error(`Unknown parameter name(s) ${unknown.map((n) => `"${n}"`).join(', ')}; expected PyTorch nn.MultiheadAttention names: ${[...KNOWN].join(', ')}.`);
  }
  const stateDict = {};
  for (const name of names) {
    const t = raw[name];
    if (!t || !Array.isArray(t.shape) || !Array.isArray(t.data)) {
      throw new Error(`Parameter "${name}": expected {"shape": [...], "data": [...]}, got ${t === null ? 'null' : typeof t}.`);
    }
    if (t.dtype && t.dtype !== 'float32') throw new Error(`Parameter "${name}": expected dtype "float32", got "${t.dtype}".`);
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== size) {
      throw new Error(`Parameter "${name}": shape [${t.shape.join(', ')}] needs ${size} numbers, the data has ${t.data.length}.`);
    }
    stateDict[name] = { data: Float32Array.from(t.data, Number), shape: t.shape.slice() };
  }
  const c = json.config || {};
  const E = c.embed_dim ?? c.embedDim ?? (stateDict['out_proj.weight'] ? stateDict['out_proj.weight'].shape[0] : undefined);
  if (E !== embedDim) {
    throw new Error(`These weights are for d_model ${E}; the page's token embeddings have d_model ${embedDim}, so it needs weights for nn.MultiheadAttention(${embedDim}, num_heads).`);
  }
  for (const key of ['kdim', 'vdim']) {
    if (c[key] != null && c[key] !== embedDim) throw new Error(`config.${key} is ${c[key]}; the page runs self-attention, so it must be ${embedDim}.`);
  }
  const numHeads = c.num_heads ?? c.numHeads ?? 8;
  if (!Number.isInteger(numHeads) || numHeads < 1 || embedDim % numHeads !== 0) {
    throw new Error(`config.num_heads must divide ${embedDim}, got ${numHeads}.`);
  }
  const config = {
    embedDim,
    numHeads,
    numKvHeads: c.num_kv_heads ?? c.numKvHeads ?? numHeads,
    bias: c.bias ?? ('in_proj_bias' in stateDict),
    addBiasKv: c.add_bias_kv ?? ('bias_k' in stateDict),
    addZeroAttn: c.add_zero_attn ?? false,
  };
  return { config, stateDict };
}

/** The weights of a MultiHeadAttention module as a golden-format JSON string. */
export function stateDictToJson(attention, description) {
  const cfg = attention.config;
  const stateDict = {};
  for (const [name, t] of Object.entries(attention.stateDict())) {
    stateDict[name] = { shape: t.shape, dtype: 'float32', data: Array.from(t.data, (v) => Number(v.toPrecision(7))) };
  }
  return JSON.stringify({
    name: 'mha-explorer-weights',
    description,
    config: {
      embed_dim: cfg.embedDim, num_heads: cfg.numHeads, num_kv_heads: cfg.numKvHeads, kdim: cfg.kdim, vdim: cfg.vdim,
      bias: cfg.bias, add_bias_kv: cfg.addBiasKv, add_zero_attn: cfg.addZeroAttn, batch_first: cfg.batchFirst,
    },
    state_dict: stateDict,
  });
}
