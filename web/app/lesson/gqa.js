// Section: grouped-query attention. 8 query heads share 8, 4, 2 or 1 key/value heads
// (numKvHeads in the core); the diagram shows who shares what, and the KV cache is computed
// from the sizes. With a model that shares key/value heads open in the explorer, it links to its
// groups and works out that model's KV cache from its config.

import { el, section, segmented, svg, int, bytes, scroller } from './dom.js';
import { math } from './math.js';
import { parameterCount } from './cost.js';
import { D_MODEL, exampleInput } from './inputs.js';
import { kvHeadsOf } from '../../explorer/present.js';

export const QUERY_HEADS = 8;
export const KV_OPTIONS = [8, 4, 2, 1];
export const CACHE_TOKENS = 8192;
export const BYTES_PER_NUMBER = 2; // fp16 / bf16, as caches are usually kept

/** Llama 3 70B (Meta's published configuration). */
export const LLAMA3_70B = { queryHeads: 64, kvHeads: 8, headDim: 128, layers: 80 };

/**
 * Bytes of K and V cached per token per layer: 2 (K and V) × kvHeads × headDim × bytes.
 * @param {{ kvHeads: number, headDim: number, bytesPerNumber?: number }} o
 */
export function kvCacheBytesPerTokenPerLayer({ kvHeads, headDim, bytesPerNumber = BYTES_PER_NUMBER }) {
  return 2 * kvHeads * headDim * bytesPerNumber;
}

/**
 * Query head -> KV head it reads: groups of queryHeads / kvHeads consecutive heads.
 * @param {number} queryHead @param {number} queryHeads @param {number} kvHeads
 */
export function kvHeadOf(queryHead, queryHeads, kvHeads) {
  return Math.floor(queryHead / (queryHeads / kvHeads));
}

const GROUP_COLOURS = 8;

/** @param {number} kvHeads */
function sharingDiagram(kvHeads) {
  const width = 640;
  const qW = 62;
  const qGap = (width - QUERY_HEADS * qW) / (QUERY_HEADS + 1);
  const kvW = Math.min(120, (width - 40) / kvHeads - 16);
  const kvGap = (width - kvHeads * kvW) / (kvHeads + 1);
  const qx = (/** @type {number} */ i) => qGap + i * (qW + qGap);
  const kx = (/** @type {number} */ g) => kvGap + g * (kvW + kvGap);
  const items = [];
  for (let i = 0; i < QUERY_HEADS; i += 1) {
    const g = kvHeadOf(i, QUERY_HEADS, kvHeads);
    items.push(svg('path', { class: `gqa-edge group-${g % GROUP_COLOURS}`, d: `M ${qx(i) + qW / 2} 46 C ${qx(i) + qW / 2} 90, ${kx(g) + kvW / 2} 90, ${kx(g) + kvW / 2} 124`, 'data-query': i, 'data-kv': g }));
  }
  for (let i = 0; i < QUERY_HEADS; i += 1) {
    const g = kvHeadOf(i, QUERY_HEADS, kvHeads);
    items.push(svg('g', { class: `gqa-query group-${g % GROUP_COLOURS}` },
      svg('rect', { x: qx(i), y: 8, width: qW, height: 38, rx: 7 }),
      svg('text', { x: qx(i) + qW / 2, y: 32, 'text-anchor': 'middle', class: 'diagram-label', text: `Q${i + 1}` })));
  }
  for (let g = 0; g < kvHeads; g += 1) {
    items.push(svg('g', { class: `gqa-kv group-${g % GROUP_COLOURS}` },
      svg('rect', { x: kx(g), y: 124, width: kvW, height: 40, rx: 7 }),
      svg('text', { x: kx(g) + kvW / 2, y: 149, 'text-anchor': 'middle', class: 'diagram-label', text: kvHeads === QUERY_HEADS ? `K${g + 1} V${g + 1}` : `K${g + 1} V${g + 1}` })));
  }
  const per = QUERY_HEADS / kvHeads;
  const name = kvHeads === QUERY_HEADS ? 'multi-head attention' : kvHeads === 1 ? 'multi-query attention' : 'grouped-query attention';
  return svg('svg', { viewBox: `0 0 ${width} 172`, class: 'gqa-diagram', id: 'gqa-diagram', role: 'img', 'data-kv-heads': kvHeads,
    'aria-label': `${name}: ${QUERY_HEADS} query heads, ${kvHeads} key/value head${kvHeads > 1 ? 's' : ''}; each key/value head is shared by ${per} query head${per > 1 ? 's' : ''}.` }, items);
}

/**
 * The KV cache of a model's config: per token (every layer), with its G key/value heads and with
 * one per query head, at BYTES_PER_NUMBER bytes a number.
 * @param {{ numHeads: number, numKvHeads: number, headDim: number, numLayers: number }} config
 */
export function modelKvCache({ numHeads, numKvHeads, headDim, numLayers }) {
  const gqa = kvCacheBytesPerTokenPerLayer({ kvHeads: numKvHeads, headDim }) * numLayers;
  const mha = kvCacheBytesPerTokenPerLayer({ kvHeads: numHeads, headDim }) * numLayers;
  return { gqa, mha, saved: 1 - gqa / mha };
}

/**
 * The model open in the explorer, where its query heads share key/value heads: a link to its
 * groups and its KV cache from its config; hidden otherwise.
 * @param {HTMLElement} box
 * @param {import('../../explorer/controller.js').Explorer} explorer
 */
function renderOpenModel(box, explorer) {
  const source = /** @type {any} */ (explorer.source);
  const kv = source && source.id === 'model' && source.model ? kvHeadsOf(source) : null;
  box.hidden = !kv;
  if (!kv) { box.replaceChildren(); return; }
  /** @type {import('../../lib/models.js').ModelConfig} */
  const c = source.config;
  const { gqa, mha, saved } = modelKvCache(c);
  const G = c.numKvHeads;
  const H = c.numHeads;
  box.dataset.bytesPerToken = String(gqa);
  box.dataset.kvHeads = String(G);
  box.replaceChildren(
    el('h3', { text: `In the model open above: ${source.name}` }),
    el('p', {}, `Its config.json gives ${H} query heads (num_attention_heads) and ${G} key/value head${G > 1 ? 's' : ''} (num_key_value_heads): each key/value head serves ${H / G} query heads. `,
      el('a', { href: '#layers-panel', id: 'gqa-model-link', text: 'See its groups in the explorer' }), '.'),
    el('div', { class: 'memory-figures' },
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: 'KV cache per token, every layer' }),
        el('span', { class: 'figure-value', id: 'gqa-model-per-token', text: bytes(gqa) }),
        el('span', { class: 'note', text: `2 (K and V) × ${G} KV heads × head dim ${c.headDim} × ${c.numLayers} layers × ${BYTES_PER_NUMBER} bytes` })),
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: `With ${H} KV heads (no sharing)` }),
        el('span', { class: 'figure-value', id: 'gqa-model-mha', text: bytes(mha) }),
        el('span', { class: 'note', text: `2 × ${H} × ${c.headDim} × ${c.numLayers} × ${BYTES_PER_NUMBER} bytes` })),
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: 'Saved' }),
        el('span', { class: 'figure-value', id: 'gqa-model-saved', text: `${Math.round(saved * 100)}%` }),
        el('span', { class: 'note', text: `${H / G} times less; at ${int(CACHE_TOKENS)} tokens ${bytes(gqa * CACHE_TOKENS)} instead of ${bytes(mha * CACHE_TOKENS)}` }))));
}

/**
 * @param {import('../../lib/index.js').MhaModule} mha
 * @param {{ explorer?: import('../../explorer/controller.js').Explorer }} [context]  the explorer: its open model, where it shares key/value heads
 */
export function gqaSection(mha, { explorer } = {}) {
  const input = exampleInput(0);
  const state = { kvHeads: 4 };
  const diagramHolder = el('div', { class: 'diagram-holder' });
  const memory = el('div', { class: 'memory-figures', id: 'gqa-memory', 'aria-live': 'polite' });
  const coreLine = el('p', { class: 'note', id: 'gqa-core' });
  const headDim = D_MODEL / QUERY_HEADS;

  function render() {
    const G = state.kvHeads;
    diagramHolder.replaceChildren(sharingDiagram(G));
    const perLayer = kvCacheBytesPerTokenPerLayer({ kvHeads: G, headDim });
    const full = kvCacheBytesPerTokenPerLayer({ kvHeads: QUERY_HEADS, headDim });
    const saved = 1 - perLayer / full;
    memory.dataset.bytesPerTokenPerLayer = String(perLayer);
    memory.dataset.kvHeads = String(G);
    memory.replaceChildren(
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: 'KV cache per token per layer' }),
        el('span', { class: 'figure-value', id: 'gqa-per-token', text: `${int(perLayer)} B` }),
        el('span', { class: 'note', text: `2 (K and V) × ${G} KV head${G > 1 ? 's' : ''} × d_k ${headDim} × ${BYTES_PER_NUMBER} bytes` })),
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: `At ${int(CACHE_TOKENS)} tokens, one layer` }),
        el('span', { class: 'figure-value', id: 'gqa-at-length', text: bytes(perLayer * CACHE_TOKENS) }),
        el('span', { class: 'note', text: `instead of ${bytes(full * CACHE_TOKENS)} with ${QUERY_HEADS} KV heads` })),
      el('div', { class: 'figure-card' }, el('span', { class: 'figure-label', text: 'Saved' }),
        el('span', { class: 'figure-value', id: 'gqa-saved', text: `${Math.round(saved * 100)}%` }),
        el('span', { class: 'note', text: G === QUERY_HEADS ? 'nothing shared: plain multi-head attention' : `each K/V head serves ${QUERY_HEADS / G} query heads` })));
    // The core: a module with G key/value heads, run on the example sentence
    const attention = new mha.MultiHeadAttention({ embedDim: D_MODEL, numHeads: QUERY_HEADS, numKvHeads: G, seed: 0 });
    try {
      const kShape = attention.parameterNames().includes('k_proj_weight') ? attention.parameterShape('k_proj_weight') : [QUERY_HEADS * headDim, D_MODEL];
      const result = attention.forward({ query: { data: input.x, shape: [input.L, D_MODEL] }, averageAttnWeights: false });
      const weights = /** @type {import('../../lib/index.js').Tensor} */ (result.weights); // needWeights is true by default
      coreLine.textContent = `In the core (numKvHeads: ${G}): W_K and W_V are ${kShape.join(' × ')} each, ${int(parameterCount(attention))} parameters in all; on “${input.text}” it still returns ${weights.shape[0]} maps of ${weights.shape[1]} × ${weights.shape[2]}, one per query head, because every query head keeps its own W_Q.`;
    } finally {
      attention.dispose();
    }
  }

  const llama = LLAMA3_70B;
  const llamaGqa = kvCacheBytesPerTokenPerLayer({ kvHeads: llama.kvHeads, headDim: llama.headDim });
  const llamaMha = kvCacheBytesPerTokenPerLayer({ kvHeads: llama.queryHeads, headDim: llama.headDim });
  const llamaTable = el('table', { class: 'lesson-table llama-table', id: 'gqa-llama' },
    el('caption', { text: `Llama 3 70B: ${llama.queryHeads} query heads, ${llama.kvHeads} KV heads, head dim ${llama.headDim}, ${llama.layers} layers, 16-bit cache.` }),
    el('thead', {}, el('tr', {}, ['', `${llama.kvHeads} KV heads (as built)`, `${llama.queryHeads} KV heads (plain MHA)`].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {},
      el('tr', {}, el('th', { scope: 'row', text: 'Per token per layer' }), el('td', { class: 'llama-gqa', text: `${int(llamaGqa)} B = ${bytes(llamaGqa)}` }), el('td', { text: bytes(llamaMha) })),
      el('tr', {}, el('th', { scope: 'row', text: `Per token, ${llama.layers} layers` }), el('td', { text: bytes(llamaGqa * llama.layers) }), el('td', { text: bytes(llamaMha * llama.layers) })),
      el('tr', {}, el('th', { scope: 'row', text: `${int(CACHE_TOKENS)} tokens, ${llama.layers} layers` }), el('td', { text: bytes(llamaGqa * llama.layers * CACHE_TOKENS) }), el('td', { text: bytes(llamaMha * llama.layers * CACHE_TOKENS) }))));

  const openModel = el('div', { class: 'gqa-model', id: 'gqa-model', hidden: true, 'aria-live': 'polite' });
  if (explorer) {
    renderOpenModel(openModel, explorer);
    explorer.addEventListener('change', (event) => {
      if (/** @type {CustomEvent<{ keys: string[] }>} */ (event).detail.keys.includes('source')) renderOpenModel(openModel, explorer);
    });
  }
  const node = section('lesson-gqa', 'Grouped-query attention: sharing keys and values',
    el('p', {}, 'When a model generates text it keeps every earlier token\'s keys and values (the KV cache), so that a new token computes only its own. That cache grows with the number of heads. Grouped-query attention keeps all ', math('h'),
      ' query heads but lets groups of them share one key/value head: ', math(String.raw`h = 8`), ' query heads with 4 KV heads means pairs share. With one KV head it is multi-query attention.'),
    el('div', { class: 'control-row' }, el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'KV heads' }),
      segmented('kv-heads', KV_OPTIONS.map((g) => ({ value: g, label: String(g) })), state.kvHeads, (v) => { state.kvHeads = v; render(); }, 'Number of key/value heads'))),
    diagramHolder, memory, coreLine,
    el('p', { text: `At scale this is what makes long contexts affordable. Per token and per layer Llama 3 70B caches 2 × ${llama.kvHeads} × ${llama.headDim} numbers of 2 bytes = ${int(llamaGqa)} bytes; with one KV head per query head it would be ${llama.queryHeads / llama.kvHeads} times as much.` }),
    scroller('table-wrap', 'Grouped-query attention in Llama models', llamaTable),
    openModel);
  render();
  return node;
}
