// What the model is for: two sentences, the cosine similarity of their embeddings, and how
// much that similarity moves when each head is switched off (head importance, as Michel et al.
// 2019 measured it for BERT).
import { el } from './dom.js';

/**
 * @param {HTMLElement} container
 * @param {{ a: string, b: string, result: { similarity: number, heads: { layer: number, head: number, similarity: number, change: number }[] } }} o
 */
export function renderSimilarity(container, o) {
  const { result } = o;
  const largest = Math.max(1e-6, ...result.heads.map((h) => Math.abs(h.change)));
  const rows = result.heads.map((h) => {
    const width = `${((Math.abs(h.change) / largest) * 100).toFixed(1)}%`;
    const bar = el('span', { class: `bar-fill ${h.change < 0 ? 'negative' : 'positive'}` });
    bar.style.width = width; // CSSOM: allowed under a strict style-src
    return el('div', { class: 'bar-row', role: 'listitem', 'data-layer': String(h.layer), 'data-head': String(h.head), 'data-change': String(h.change) },
      el('span', { class: 'bar-label', text: `L${h.layer} H${h.head + 1} off` }),
      el('span', { class: 'bar-track' }, bar),
      el('span', { class: 'bar-value', text: `${h.change >= 0 ? '+' : '−'}${Math.abs(h.change).toFixed(4)} → ${h.similarity.toFixed(4)}` }));
  });
  const most = result.heads.reduce((best, h) => (Math.abs(h.change) > Math.abs(best.change) ? h : best));
  container.replaceChildren(
    el('p', { class: 'similarity-value', id: 'similarity-value' }, 'Cosine similarity of the two embeddings: ', el('strong', { text: result.similarity.toFixed(4) })),
    el('div', { class: 'bar-chart', role: 'list', 'aria-label': 'How much each head moves the similarity when switched off' }, ...rows),
    el('p', { class: 'note', text: `Switching off one head at a time (its output set to zero before W_O), the similarity moves most without layer ${most.layer}'s head ${most.head + 1} (${most.change >= 0 ? '+' : '−'}${Math.abs(most.change).toFixed(4)}).` }));
}
