// Heads from a weights file: a state_dict of nn.MultiheadAttention (.safetensors or JSON),
// from bytes a user picked or a URL, run on the lesson's token features.
import { NUM_HEADS_MISSING } from '../lib/errors.js';
import { loadStateDictFile } from '../lib/index.js';
import { loadOnce } from '../lib/load-once.js';
import { TokenFeatureSource } from './token-features.js';
import { fetchData, tokenFeatureRoles } from '../roles/measure.js';

/** URLs weights may be fetched from (not javascript:, file: or others a browser refuses anyway). */
const FETCHED_PROTOCOLS = ['http:', 'https:', 'blob:', 'data:'];

/** The bytes at a URL, fetched once (shared by every element on a page). */
export const fetchWeights = loadOnce(async (url) => {
  const { protocol } = new URL(url, globalThis.location?.href ?? 'http://localhost/');
  if (!FETCHED_PROTOCOLS.includes(protocol)) {
    throw new Error(`could not load weights from ${url}: expected an http:, https:, blob: or data: URL or a path, got a ${protocol} URL`);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load weights from ${url}: HTTP ${response.status} ${response.statusText}`);
  return response.arrayBuffer();
});

/**
 * Read a weights file for heads over the token features: .safetensors or JSON. A file that does
 * not say how many heads it has is read as `numHeads` heads (and the note says so). With
 * `width`, the file must be for that d_model.
 * @param {ArrayBuffer | Uint8Array | string | object} bytes  what loadStateDictFile reads
 * @param {string} fileName
 * @param {{ width?: number, numHeads?: number }} [options]
 * @returns {{ config: import('../lib/index.js').AttentionConfig, stateDict: Record<string, import('../lib/index.js').TensorInput>, note: string }}
 */
export function readWeightsFile(bytes, fileName, { width, numHeads } = {}) {
  let file;
  let note = '';
  try {
    file = loadStateDictFile(bytes, { fileName, numHeads });
  } catch (error) {
    if (numHeads !== undefined || /** @type {{ code?: string }} */ (error)?.code !== NUM_HEADS_MISSING) throw error;
    file = loadStateDictFile(bytes, { fileName, numHeads: 8 });
    note = ' The file does not say how many heads it has; read as 8.';
  }
  const c = file.config;
  if (width !== undefined && c.embedDim !== width) {
    throw new Error(`${fileName}: these weights are for d_model ${c.embedDim}; the page's token embeddings have d_model ${width}, so it needs weights of nn.MultiheadAttention(${width}, num_heads).`);
  }
  if (c.kdim !== c.embedDim || c.vdim !== c.embedDim) {
    throw new Error(`${fileName}: kdim ${c.kdim} and vdim ${c.vdim}; the explorer runs self-attention on its ${c.embedDim}-wide inputs, so both must equal embed_dim ${c.embedDim}.`);
  }
  const config = { embedDim: c.embedDim, numHeads: c.numHeads, numKvHeads: c.numKvHeads, bias: c.bias, addBiasKv: c.addBiasKv, addZeroAttn: c.addZeroAttn };
  return { config, stateDict: file.stateDict, note: `${file.prefix ? ` Layer "${file.prefix}".` : ''}${note}` };
}

/**
 * The weights of a MultiHeadAttention module as a golden-format JSON string.
 * @param {import('./source.js').AnyAttention} attention
 * @param {string} description
 */
export async function stateDictToJson(attention, description) {
  // a loaded module's (a worker's is there once ready has resolved)
  const cfg = /** @type {Required<import('../lib/index.js').AttentionConfig>} */ (attention.config);
  /** @type {Record<string, { shape: number[], dtype: 'float32', data: number[] }>} */
  const stateDict = {};
  for (const [name, t] of Object.entries(await attention.stateDict())) {
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

export class FileSource extends TokenFeatureSource {
  /**
   * @param {{ file: { name: string, url?: string } & ReturnType<typeof readWeightsFile> }} o  file: readWeightsFile's result,
   *   the file's name, and the URL it was fetched from (none: a file the user picked)
   */
  constructor({ file }) {
    super({ config: file.config });
    /** @type {'file'} */
    this.id = 'file';
    this.file = file;
    this.name = `weights from ${file.name.split('/').pop()}`;
    /** What its heads do, by the one rule of web/roles/, once measureRoles has run. @type {import('./source.js').HeadRoles | null} */
    this.roles = null;
  }

  /**
   * Name its heads by the one rule: the annotated sentences tagged and embedded as the page does,
   * their maps computed by the core (about half a minute: every sentence goes through the tagger).
   * @param {import('./source.js').MeasureProgress} [onProgress]
   */
  async measureRoles(onProgress) {
    this.roles = await tokenFeatureRoles(this, fetchData, { onProgress });
    return this.roles;
  }

  /** @param {import('./source.js').AnyAttention} attention */
  async setWeights(attention) {
    await attention.loadStateDict(this.file.stateDict);
  }

  short() { return 'loaded'; }

  /** @param {number} h @param {import('../lib/index.js').HeadStatistics} s */
  describe(h, s) {
    return { ...super.describe(h, s), how: `These weights come from ${this.file.url ? this.file.url : 'the file you picked'}; the page cannot know what they were trained for.` };
  }

  note() {
    const { config } = this;
    const from = this.file.url ? `Weights fetched from ${this.file.url}` : `Weights from ${this.file.name}, the file you picked (read in this page; nothing was uploaded)`;
    return `${from}: ${config.numHeads} heads of ${config.embedDim / config.numHeads} dimensions, applied to this page's ${config.embedDim}-dimensional token embeddings. Head names are not known for them; the descriptions are read from the statistics.${this.file.note}`;
  }

  woNote() {
    return 'These W_O weights mix all heads into every output number, as trained models do.';
  }
}
