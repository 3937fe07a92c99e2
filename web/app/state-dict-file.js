// Weights files for the page: reading (.safetensors or JSON, through the JS API) with the page's
// own requirement (d_model 64, self-attention), and writing JSON in the golden-case format of
// tests/golden: { "config": {...}, "state_dict": { name: { "shape", "dtype", "data" } } }.

/**
 * Read a weights file for this page, whose token embeddings are `embedDim` wide: .safetensors or
 * JSON, through the JS API's loadStateDictFile. A file that does not say how many heads it has
 * is read as `defaultHeads` heads (and the note says so).
 * @param {{loadStateDictFile: Function}} api the JS API module
 * @param {Uint8Array} bytes
 * @param {string} fileName
 * @returns {{ config: object, stateDict: object, note: string }}
 */
export function readWeightsFile(api, bytes, fileName, embedDim, defaultHeads = 8) {
  let file;
  let note = '';
  try {
    file = api.loadStateDictFile(bytes, { fileName });
  } catch (error) {
    if (!/number of heads is not in the file/.test(error.message)) throw error;
    file = api.loadStateDictFile(bytes, { fileName, numHeads: defaultHeads });
    note = ` The file does not say how many heads it has; read as ${defaultHeads}.`;
  }
  const c = file.config;
  if (c.embedDim !== embedDim) {
    throw new Error(`${fileName}: these weights are for d_model ${c.embedDim}; the page's token embeddings have d_model ${embedDim}, so it needs weights of nn.MultiheadAttention(${embedDim}, num_heads).`);
  }
  if (c.kdim !== embedDim || c.vdim !== embedDim) {
    throw new Error(`${fileName}: kdim ${c.kdim} and vdim ${c.vdim}; the page runs self-attention on its ${embedDim}-wide embeddings, so both must be ${embedDim}.`);
  }
  const config = { embedDim, numHeads: c.numHeads, numKvHeads: c.numKvHeads, bias: c.bias, addBiasKv: c.addBiasKv, addZeroAttn: c.addZeroAttn };
  return { config, stateDict: file.stateDict, note: `${file.prefix ? ` Layer "${file.prefix}".` : ''}${note}` };
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
