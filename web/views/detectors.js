// The head detectors' tables (web/lib/detectors.js): one layers × heads table per detector
// (previous-token, duplicate-token, induction), each cell the head's score on the repeated
// random sequences over the same score on their shuffled controls, marked and labelled where the
// head is named; a click opens that head in the explorer. Beside them, the same three scores of
// every head on the text in view (renderTextScores): no control and no name, since an ordinary
// text is not built so that a simple rule cannot score.
import { el } from './dom.js';

/** @typedef {import('../lib/detectors.js').DetectedHead} DetectedHead */
/** @typedef {import('../lib/detectors.js').DetectorName} DetectorName */

/** @type {Array<[DetectorName, string, string]>} name, title, what its pattern is */
export const DETECTOR_TABLES = [
  ['previousToken', 'Previous-token', 'the token just before'],
  ['duplicateToken', 'Duplicate-token', 'the earlier copy of the same token'],
  ['induction', 'Induction', 'the token after the earlier copy of the same token'],
];

const f2 = (/** @type {number} */ x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const f4 = (/** @type {number} */ x) => (Number.isFinite(x) ? x.toFixed(4) : 'not a number');

/**
 * @param {HTMLElement} container
 * @param {{ heads: DetectedHead[], numLayers: number, numHeads: number, threshold: number, length: number, count: number,
 *           selected: { layer: number, head: number }, onSelect: (layer: number, head: number) => void }} o
 */
export function renderDetectors(container, o) {
  const { numLayers: L, numHeads: H } = o;
  /** @type {Map<string, DetectedHead>} */
  const byHead = new Map(o.heads.map((h) => [`${h.layer}.${h.head}`, h]));
  const named = o.heads.filter((h) => h.label);
  const summary = named.length
    ? `Named: ${named.map((h) => `layer ${h.layer} head ${h.head + 1} (${DETECTOR_TABLES.find(([n]) => n === h.label)?.[1].toLowerCase()}, ${f2(h[/** @type {DetectorName} */ (h.label)])})`).join('; ')}.`
    : `No head is named: none puts ${o.threshold} of its attention on a pattern and more than on the controls.`;
  const tables = DETECTOR_TABLES.map(([name, title, what]) => {
    const head = el('tr', {}, el('th', { scope: 'col', text: 'layer' }), Array.from({ length: H }, (_, h) => el('th', { scope: 'col', text: `H${h + 1}` })));
    const rows = Array.from({ length: L }, (_, l) => el('tr', {}, el('th', { scope: 'row', text: `L${l}` }),
      Array.from({ length: H }, (_, h) => {
        const e = byHead.get(`${l}.${h}`);
        if (!e) return el('td', { text: '' });
        const v = e[name];
        const c = e.control[name];
        const isNamed = e.label === name;
        const selected = l === o.selected.layer && h === o.selected.head;
        const td = el('td', {}, el('button', {
          type: 'button', class: `detector-cell${isNamed ? ' named' : ''}${selected ? ' selected' : ''}`, 'aria-pressed': String(selected),
          'data-layer': String(l), 'data-head': String(h), 'data-detector': name,
          'aria-label': `layer ${l}, head ${h + 1}: ${title.toLowerCase()} score ${f2(v)}, control ${f2(c)}${isNamed ? `, named ${title.toLowerCase()} head` : ''}; open this head`,
          title: `${f4(v)} on the repeated sequences, ${f4(c)} on the controls`,
          onclick: () => o.onSelect(l, h),
        }, el('span', { class: 'detector-score', text: f2(v) }), el('span', { class: 'detector-control', text: `ctrl ${f2(c)}` }),
        isNamed ? el('span', { class: 'detector-label', text: title.toLowerCase() }) : null));
        // the share of attention on the pattern, 0..1, as the cell's tint
        td.style.setProperty('--score', String(Math.max(0, Math.min(1, Number.isFinite(v) ? v : 0))));
        return td;
      })));
    return el('div', { class: 'table-wrap', tabIndex: 0, role: 'region', 'aria-label': `${title} scores` },
      el('table', { class: 'detector-table', id: `detector-${name}` },
        el('caption', { text: `${title}: the share of each head's attention (past the first token) on ${what}.` }),
        el('thead', {}, head), el('tbody', {}, rows)));
  });
  container.replaceChildren(
    el('p', { id: 'detectors-summary', class: 'detectors-summary', text: summary }),
    el('p', { class: 'note', text: `Each cell: the score averaged over ${o.count} sequences of ${o.length} random tokens repeated (${2 * o.length + 1} tokens with the first), over “ctrl”, the same score on the same tokens shuffled so that nothing stands where the repeat put it. A head is named where its score is at least ${o.threshold} and, but for previous-token, above its control. Click a cell to open that head.` }),
    el('div', { class: 'detector-tables' }, tables),
  );
}

/**
 * Every head's three scores on the text in view: a layers × heads table, each cell previous,
 * duplicate and induction; a click opens that head.
 * @param {HTMLElement} container
 * @param {{ scores: { heads: Array<{ layer: number, head: number } & Record<DetectorName, number>>, cells: Record<DetectorName, number> } | null,
 *           problem?: string | null, tokens: number, numLayers: number, numHeads: number,
 *           selected: { layer: number, head: number }, onSelect: (layer: number, head: number) => void }} o
 */
export function renderTextScores(container, o) {
  const title = el('h4', { id: 'detectors-text-title', text: `On the text in view (${o.tokens} tokens)` });
  if (!o.scores) {
    container.replaceChildren(title, el('p', { class: 'note', text: o.problem ?? '' }));
    return;
  }
  const { numLayers: L, numHeads: H, scores } = o;
  /** @type {Map<string, Record<DetectorName, number>>} */
  const byHead = new Map(scores.heads.map((h) => [`${h.layer}.${h.head}`, h]));
  const short = /** @type {Record<DetectorName, string>} */ ({ previousToken: 'prev', duplicateToken: 'dup', induction: 'ind' });
  const head = el('tr', {}, el('th', { scope: 'col', text: 'layer' }), Array.from({ length: H }, (_, h) => el('th', { scope: 'col', text: `H${h + 1}` })));
  const rows = Array.from({ length: L }, (_, l) => el('tr', {}, el('th', { scope: 'row', text: `L${l}` }),
    Array.from({ length: H }, (_, h) => {
      const e = byHead.get(`${l}.${h}`);
      if (!e) return el('td', { text: '' });
      const selected = l === o.selected.layer && h === o.selected.head;
      return el('td', {}, el('button', {
        type: 'button', class: `detector-cell text-cell${selected ? ' selected' : ''}`, 'aria-pressed': String(selected),
        'data-layer': String(l), 'data-head': String(h),
        // the visible text first, as the accessible name must contain it
        'aria-label': `${DETECTOR_TABLES.map(([name]) => `${short[name]} ${f2(e[name])}`).join(' ')}: layer ${l}, head ${h + 1}, its previous-token, duplicate-token and induction scores on this text; open this head`,
        title: DETECTOR_TABLES.map(([name, t]) => `${t}: ${f4(e[name])}`).join('\n'),
        onclick: () => o.onSelect(l, h),
      }, DETECTOR_TABLES.flatMap(([name], k) => [k ? ' ' : null, el('span', { class: 'text-score', 'data-detector': name, text: `${short[name]} ${f2(e[name])}` })])));
    })));
  const { cells } = scores;
  const repeats = cells.duplicateToken
    ? `On it the patterns have ${cells.previousToken} previous-token, ${cells.duplicateToken} duplicate-token and ${cells.induction} induction cells.`
    : 'It repeats no token, so no head can score on duplicate-token or induction: type a text that repeats a phrase to see an induction head at work.';
  container.replaceChildren(
    title,
    el('p', { class: 'note', text: `The same three shares of each head's attention (the first token's column left out) on the text the model reads now, with no control and no name: a text is not built so that only the pattern can score. Each cell: previous-token (prev), duplicate-token (dup) and induction (ind). ${repeats} “–”: the head puts all its attention on the first token.` }),
    el('div', { class: 'table-wrap', tabIndex: 0, role: 'region', 'aria-label': 'Scores on the text in view' },
      el('table', { class: 'detector-table', id: 'detector-text' },
        el('thead', {}, head), el('tbody', {}, rows))),
  );
}
