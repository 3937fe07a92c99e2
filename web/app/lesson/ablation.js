// Section: head ablation. Switch heads off (ablateHeads: zeroed before W_O) and see how much
// each token's output moves: ‖output − output with the heads off‖₂ per token.

import { el, section, norm, onThemeChange } from './dom.js';
import { renderAblationBars, ablationText } from '../../views/ablation.js';
import { exampleInput, designedAttention, designedHeadLabel, D_MODEL, NUM_HEADS } from './inputs.js';

/**
 * @param {import('../../lib/index.js').MultiHeadAttention} attention
 * @param {ReturnType<typeof exampleInput>} input
 * @param {number[]} ablateHeads
 */
export function ablationDifferences(attention, input, ablateHeads) {
  const E = D_MODEL;
  const query = { data: input.x, shape: [input.L, E] };
  const base = attention.forward({ query, needWeights: false }).output.data;
  const ablated = attention.forward({ query, needWeights: false, ablateHeads }).output.data;
  return Array.from({ length: input.L }, (_, t) => {
    const diff = new Float32Array(E);
    for (let c = 0; c < E; c += 1) diff[c] = base[t * E + c] - ablated[t * E + c];
    return { difference: norm(diff), baseline: norm(base, t * E, E) };
  });
}

/** @param {import('../../lib/index.js').MhaModule} mha */
export function ablationSection(mha) {
  const attention = designedAttention(mha);
  const input = exampleInput(0);
  const off = new Set([3]); // verb -> subject: matters at the verbs only
  const chart = el('div', { class: 'bar-chart', id: 'ablation-chart', role: 'list' });
  const verdict = el('p', { id: 'ablation-verdict', 'aria-live': 'polite' });
  const boxes = Array.from({ length: NUM_HEADS }, (_, h) => {
    const box = el('input', { type: 'checkbox', checked: off.has(h), 'data-head': String(h) });
    box.addEventListener('change', () => { if (box.checked) off.add(h); else off.delete(h); render(); });
    return el('label', { class: 'chip-toggle' }, box, el('span', { text: designedHeadLabel(h) }));
  });
  const node = section('lesson-ablation', 'Head ablation: switch heads off');
  /** @type {{ heads: number[], rows: { difference: number, baseline: number }[] } | null} */
  let last = null;

  function render() {
    const heads = [...off].sort((a, b) => a - b);
    const rows = ablationDifferences(attention, input, heads);
    const { total, most } = renderAblationBars(chart, { labels: input.labels, rows });
    verdict.textContent = ablationText({ labels: input.labels, rows, heads, total, most });
    node.dataset.total = String(total);
    last = { heads, rows };
  }

  node.append(
    el('p', { text: 'One way to find out what a head does is to remove it and watch what changes. Below, the chosen heads\' outputs are set to zero before W_O (ablateHeads in the core), and the bars show by how much each token\'s output vector moves. A head that matters for a token moves it; a head with nothing to do there leaves it alone.' }),
    el('p', { class: 'note', text: `Sentence: “${input.text}” Grey: the size of the full output ‖output‖; colour: ‖output − output with the heads off‖.` }),
    el('div', { class: 'chip-row', role: 'group', 'aria-label': 'Heads switched off' }, boxes),
    chart, verdict);
  render();
  onThemeChange(() => render());
  // what the section shows, for the tests
  return Object.assign(node, { current: () => last });
}
