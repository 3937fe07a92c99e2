// What a model predicts at a token: its five most probable tokens with their probabilities, and
// the same with heads switched off beside them.
import { el } from './dom.js';

/** @typedef {import('../sources/source.js').Prediction} Prediction */

const percent = (/** @type {number} */ p) => `${(100 * p).toFixed(p < 0.01 ? 2 : 1)}%`;

/** A bar as long as the probability (set through the CSSOM: no inline style attribute). @param {number} p */
function bar(p) {
  const node = el('span', { class: 'prediction-bar', 'aria-hidden': 'true' });
  node.style.setProperty('--p', p.toFixed(4));
  return node;
}

/** @param {string} title @param {Prediction[]} rows */
function list(title, rows) {
  return el('figure', { class: 'predictions-list' },
    el('figcaption', { text: title }),
    el('ol', {}, rows.map((r) => el('li', {},
      el('span', { class: 'prediction-token', text: JSON.stringify(r.text).slice(1, -1) || ' ' }),
      bar(r.probability),
      el('span', { class: 'prediction-p', text: percent(r.probability) })))));
}

/**
 * @param {HTMLElement} container
 * @param {{ token: string, position: number, count: number, next: boolean, rows: Prediction[],
 *           off?: { heads: string, rows: Prediction[] } | null }} o
 *   next: GPT-2 (the token after) or BERT (the token in its place)
 */
export function renderPredictions(container, o) {
  const where = o.next ? `After “${o.token}” (token ${o.position + 1} of ${o.count}), the model's next token:` : `In the place of “${o.token}” (token ${o.position + 1} of ${o.count}), the model's token:`;
  container.replaceChildren(
    el('p', { class: 'note', text: `${where} its five most probable, from its logits (softmax over the whole vocabulary). Hover or click a token above to move.` }),
    el('div', { class: 'predictions' }, list('All heads on', o.rows), o.off ? list(`With ${o.off.heads} off`, o.off.rows) : null),
  );
}
