// Section: masks and sources. A causal mask (decoder-style self-attention) and cross-attention
// with a second sentence as keys and values, on the designed heads.

import { el, section, segmented, fmt, themeColors, onThemeChange, scroller } from './dom.js';
import { math } from './math.js';
import { drawHeatmap } from '../../views/heatmap.js';
import { exampleInput, designedAttention, designedHeadLabel, EXAMPLES, D_MODEL, NUM_HEADS, HEADS } from './inputs.js';

/** @param {import('../../lib/index.js').MhaModule} mha */
export function masksSection(mha) {
  const attention = designedAttention(mha);
  const queryInput = exampleInput(0);
  const state = { head: 1, causal: false, source: -1 }; // source -1: the same sentence
  let theme = themeColors();
  const canvas = el('canvas', { class: 'heatmap', id: 'masks-map', role: 'img' });
  const verdict = el('p', { id: 'masks-verdict', 'aria-live': 'polite' });
  const causalBox = el('input', { type: 'checkbox', id: 'causal-toggle' });
  const sourceSelect = el('select', { id: 'masks-source', 'aria-label': 'Keys and values from' },
    el('option', { value: '-1', text: 'the same sentence (self-attention)' }),
    EXAMPLES.map((e, i) => (i === 0 ? null : el('option', { value: String(i), text: `another sentence: “${e.text}” (cross-attention)` }))));
  const node = section('lesson-masks', 'Masks and sources: decoder self-attention and cross-attention');
  /** @type {{ map: number[], L: number, S: number, future: number } | null} */
  let last = null;

  function render() {
    const h = state.head;
    const cross = state.source >= 0;
    const kv = cross ? exampleInput(state.source) : queryInput;
    causalBox.disabled = cross;
    const L = queryInput.L;
    const S = kv.L;
    const result = attention.forward({
      query: { data: queryInput.x, shape: [L, D_MODEL] },
      key: { data: kv.x, shape: [S, D_MODEL] },
      value: { data: kv.x, shape: [S, D_MODEL] },
      isCausal: !cross && state.causal,
      averageAttnWeights: false,
    });
    const map = /** @type {import('../../lib/index.js').Tensor} */ (result.weights).data.slice(h * L * S, (h + 1) * L * S);
    let future = 0;
    for (let i = 0; i < L; i += 1) for (let j = i + 1; j < S; j += 1) future += map[i * S + j];
    const width = Math.min(560, node.clientWidth || 560);
    drawHeatmap(canvas, { values: map, rows: L, cols: S, rowLabels: queryInput.labels, colLabels: kv.labels, width, maxCell: 40, showValues: true, theme });
    canvas.setAttribute('aria-label', `${designedHeadLabel(h)}: ${L} query tokens by ${S} key tokens${cross ? ' of the second sentence' : ''}${!cross && state.causal ? ', causal mask on' : ''}.`);
    if (cross) {
      verdict.textContent = `Cross-attention: queries from “${queryInput.text}”, keys and values from “${kv.text.replace(/[.!?]$/, '')}”. The map is ${L} × ${S}, not square; each output row is a mix of the other sentence's value vectors. This is how a decoder reads its encoder.`;
    } else if (state.causal) {
      verdict.textContent = `Causal mask on: token i may only look at tokens 1…i. The weights above the diagonal add up to ${future === 0 ? '0' : fmt(future, 6)} in the core's output${h === 1 ? '; the next-token head has nothing to look at and its weight falls back on what the mask allows' : ''}.`;
    } else {
      verdict.textContent = `Self-attention without a mask: every token sees the whole sentence, including later words (the weights above the diagonal add up to ${fmt(future, 2)}). Encoders work this way; a decoder that generates text cannot, since later words do not exist yet.`;
    }
    /** @type {HTMLElement} */ (node.querySelector('#masks-caption')).textContent = `${designedHeadLabel(h)} looks at ${HEADS[h].focus} Rows: queries; columns: keys; weights from the core.`;
    node.dataset.future = String(future);
    node.dataset.shape = `${L}x${S}`;
    last = { map: Array.from(map), L, S, future };
  }

  causalBox.addEventListener('change', () => { state.causal = causalBox.checked; render(); });
  sourceSelect.addEventListener('change', () => { state.source = Number(sourceSelect.value); render(); });
  node.append(
    el('p', {}, 'The same module does three jobs depending on what it is given. In an encoder every token attends to every token. In a decoder a causal mask sets the scores of later tokens to ', math(String.raw`-\infty`),
      ' before the softmax, so that their weights are exactly 0. In cross-attention the queries come from one sequence and the keys and values from another.'),
    el('div', { class: 'control-row' },
      el('div', { class: 'control' }, el('span', { class: 'control-label', text: 'Head' }),
        segmented('masks-head', Array.from({ length: NUM_HEADS }, (_, h) => ({ value: h, label: `H${h + 1}` })), state.head, (v) => { state.head = v; render(); }, 'Head')),
      el('label', { class: 'switch' }, causalBox, el('span', { text: 'Causal mask' })),
      el('label', { class: 'control' }, el('span', { class: 'control-label', text: 'Keys and values from' }), sourceSelect)),
    el('figure', { class: 'map-figure' }, scroller('canvas-scroll', 'The masked attention map', canvas),
      el('figcaption', { class: 'note', id: 'masks-caption', text: 'Rows: queries. Columns: keys. Weights from the core.' })),
    verdict);
  render();
  requestAnimationFrame(render); // again once the section has its width
  onThemeChange((t) => { theme = t; render(); });
  // what the section shows, for the tests
  return Object.assign(node, { current: () => last });
}
