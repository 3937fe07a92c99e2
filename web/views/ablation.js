// Head ablation: how far each token's output moves when heads are switched off (their outputs
// set to zero before W_O): one bar per token, ‖output − output with the heads off‖ over the
// size of the output itself.
import { el } from './dom.js';

const fmt = (/** @type {number} */ v) => v.toFixed(2);

/**
 * @param {HTMLElement} chart  the bars are drawn here (role="list")
 * @param {{ labels: string[], rows: { difference: number, baseline: number }[] }} o
 * @returns {{ total: number, most: number }} the summed difference and the token that moved most
 */
export function renderAblationBars(chart, { labels, rows }) {
  const largest = Math.max(1e-9, ...rows.map((r) => r.difference), ...rows.map((r) => r.baseline));
  chart.replaceChildren(...rows.map((r, t) => {
    const base = el('span', { class: 'bar-base' });
    const fill = el('span', { class: 'bar-fill' });
    // CSSOM: allowed under a strict style-src
    base.style.width = `${((r.baseline / largest) * 100).toFixed(1)}%`;
    fill.style.width = `${((r.difference / largest) * 100).toFixed(1)}%`;
    return el('div', { class: 'bar-row', role: 'listitem', 'data-token': String(t), 'data-difference': String(r.difference) },
      el('span', { class: 'bar-label', text: labels[t] }), el('span', { class: 'bar-track' }, base, fill),
      el('span', { class: 'bar-value', text: fmt(r.difference) }));
  }));
  const total = rows.reduce((s, r) => s + r.difference, 0);
  const most = rows.reduce((best, r, t) => (r.difference > rows[best].difference ? t : best), 0);
  return { total, most };
}

/**
 * The verdict under the bars, in words.
 * @param {{ labels: string[], rows: { difference: number, baseline: number }[], heads: number[], total: number, most: number, what?: string }} o
 */
export function ablationText({ labels, rows, heads, total, most, what = 'output' }) {
  return heads.length === 0
    ? `No head is switched off: the ${what} is unchanged, every difference is 0.`
    : `With ${heads.map((h) => `H${h + 1}`).join(', ')} off, the ${what} moves most at “${labels[most]}” (‖Δ‖ = ${fmt(rows[most].difference)} of ‖${what}‖ = ${fmt(rows[most].baseline)}). Summed over the ${rows.length} tokens: ${fmt(total)}.`;
}

/**
 * The explorer's ablation panel: a switch per head, the bars, the verdict.
 * @param {HTMLElement} container  built on first use
 * @param {{ numHeads: number, off: Set<number>, shortOf: (h: number) => string, labels: string[],
 *           rows: { difference: number, baseline: number }[] | null, what: string, missing?: string,
 *           onToggle: (h: number, off: boolean) => void }} o  rows null: this source cannot switch heads off
 */
export function renderAblation(container, o) {
  const key = `${o.numHeads}:${Array.from({ length: o.numHeads }, (_, h) => o.shortOf(h)).join('\u0000')}`;
  if (container.dataset.key !== key) {
    container.dataset.key = key;
    container.replaceChildren(
      el('div', { class: 'chip-row', role: 'group', 'aria-label': 'Heads switched off' },
        Array.from({ length: o.numHeads }, (_, h) => el('label', { class: 'chip-toggle' },
          el('input', { type: 'checkbox', 'data-head': String(h), onchange: (/** @type {Event} */ event) => o.onToggle(h, /** @type {HTMLInputElement} */ (event.target).checked) }),
          el('span', { text: `H${h + 1} · ${o.shortOf(h)}` })))),
      el('div', { class: 'bar-chart', id: 'ablation-bars', role: 'list', 'aria-label': 'How far each token moves' }),
      el('p', { id: 'ablation-text', 'aria-live': 'polite' }));
  }
  /** @type {NodeListOf<HTMLInputElement>} */ (container.querySelectorAll('input[data-head]')).forEach((box) => { box.checked = o.off.has(Number(box.dataset.head)); box.disabled = !o.rows; });
  const chart = /** @type {HTMLElement} */ (container.querySelector('#ablation-bars'));
  const text = /** @type {HTMLElement} */ (container.querySelector('#ablation-text'));
  if (!o.rows) {
    chart.replaceChildren();
    text.textContent = o.missing ?? '';
    return null;
  }
  const { total, most } = renderAblationBars(chart, { labels: o.labels, rows: o.rows });
  text.textContent = ablationText({ labels: o.labels, rows: o.rows, heads: [...o.off].sort((a, b) => a - b), total, most, what: o.what });
  return { total, most };
}
