// What each head does, as tables (web/roles/evaluate.js's result): heads down; relations across,
// each score with its 95% interval and the strongest baseline named beneath; roles across, with
// their thresholds. A relation cell opens the test items where the head picked the right word and
// where it did not. A button measures the table again in the page and says whether it agrees.
import { el } from './dom.js';
import { labelName, ROLES, RELATIONS } from '../roles/vocabulary.js';
import { notVisibleText, rolesSummary } from '../roles/table.js';

export { rolesSummary };

/** @typedef {import('../sources/source.js').HeadRoles} HeadRoles */
/** @typedef {import('../sources/source.js').HeadRoleEntry} HeadRoleEntry */

const f2 = (/** @type {number} */ x) => x.toFixed(2);
const interval = (/** @type {import('../sources/source.js').RoleFigure} */ v) => `${f2(v.score)} [${f2(v.ci[0])}, ${f2(v.ci[1])}]`;
const headName = (/** @type {HeadRoleEntry} */ e) => `L${e.layer} H${e.head + 1}`;
const ITEMS_SHOWN = 8;

/**
 * @param {{ words: string[] }} sentence
 * @param {number} query
 * @param {number} chosen
 * @param {number[]} keys
 */
function itemText(sentence, query, chosen, keys) {
  return el('span', {}, ...sentence.words.flatMap((w, i) => {
    const node = i === query ? el('mark', { text: w }) : keys.includes(i) ? el('u', { text: w }) : i === chosen ? el('strong', { text: w }) : document.createTextNode(w);
    return i && !/^[,.?!;:]$/.test(w) ? [document.createTextNode(' '), node] : [node];
  }));
}

/**
 * The test items of a relation where a head hit and where it missed.
 * @param {HTMLElement} container
 * @param {HeadRoles} table
 * @param {HeadRoleEntry} entry
 * @param {string} relation
 */
function renderItems(container, table, entry, relation) {
  const { evidence } = table;
  const ev = evidence?.relations?.[relation];
  if (!evidence || !ev) { container.replaceChildren(el('p', { class: 'note', text: 'The items are not in this table.' })); return; }
  const chosen = ev.chosen[`${entry.layer}.${entry.head}`];
  /** @typedef {{ s: number, query: number, keys: number[], chosen: number }} Item */
  /** @type {Item[]} */
  const hits = [];
  /** @type {Item[]} */
  const misses = [];
  ev.items.forEach(([s, query, ...keys], k) => (keys.includes(chosen[k]) ? hits : misses).push({ s, query, keys, chosen: chosen[k] }));
  const list = (/** @type {Item[]} */ items) => el('ol', {}, ...items.slice(0, ITEMS_SHOWN).map((x) => {
    const sentence = evidence.sentences[x.s];
    const word = x.chosen >= 0 ? sentence.words[x.chosen] : 'nothing';
    return el('li', {}, itemText(sentence, x.query, x.chosen, x.keys), el('span', { class: 'muted', text: ` — from “${sentence.words[x.query]}” it picked “${word}”${x.keys.includes(x.chosen) ? '' : `, not “${x.keys.map((i) => sentence.words[i]).join('” or “')}”`}` }));
  }));
  const v = entry.relations[relation];
  container.replaceChildren(
    el('h4', { text: `${headName(entry)}, ${labelName(relation)}: the right word in ${hits.length} of ${ev.items.length} test items (${interval(v)}; strongest baseline ${f2(v.baseline.score)}, ${v.baseline.name})` }),
    el('p', { class: 'note', text: 'Highlighted: the query word; underlined: the annotated answer; bold: the word the head picked instead.' }),
    el('div', { class: 'roles-items' },
      el('div', {}, el('h5', { text: `Right (${hits.length}${hits.length > ITEMS_SHOWN ? `, first ${ITEMS_SHOWN}` : ''})` }), list(hits)),
      el('div', {}, el('h5', { text: `Wrong (${misses.length}${misses.length > ITEMS_SHOWN ? `, first ${ITEMS_SHOWN}` : ''})` }), list(misses))));
}

/** Whether two tables agree, figure for figure; returns the differences (at most five). @param {HeadRoles} a @param {HeadRoles} b */
export function tableDifferences(a, b) {
  /** @type {string[]} */
  const out = [];
  const strip = (/** @type {HeadRoles} */ { heads, rule, corpus }) => ({ heads, rule, corpus: { sentences: corpus.sentences, split: corpus.split } });
  const x = strip(a);
  const y = strip(b);
  if (JSON.stringify(x.rule) !== JSON.stringify(y.rule)) out.push('the baselines or thresholds');
  if (JSON.stringify(x.corpus) !== JSON.stringify(y.corpus)) out.push('the sentences');
  if (JSON.stringify(a.heldOut ?? null) !== JSON.stringify(b.heldOut ?? null)) out.push('the mean weights on held-out sentences');
  x.heads.forEach((e, i) => { if (JSON.stringify(e) !== JSON.stringify(y.heads[i])) out.push(headName(e)); });
  return out.slice(0, 5);
}

/**
 * @param {HTMLElement} container
 * @param {{ table: HeadRoles, layer?: number, measure?: ((onProgress: import('../sources/source.js').MeasureProgress) => Promise<HeadRoles>) | null, note?: string }} o
 *   table: evaluate.js's result (with evidence for the item lists); layer: the layer shown, whose
 *   rows are marked; measure: recomputes the table in the page (the button is shown with it);
 *   note: what the button's status line says first
 */
export function renderRolesTable(container, o) {
  const { table } = o;
  const rel = Object.keys(RELATIONS).filter((r) => table.rule.relations[r]);
  const roles = Object.keys(ROLES).filter((r) => table.rule.roles[r]);
  const items = el('div', { id: 'roles-evidence', class: 'roles-evidence', 'aria-live': 'polite' });
  const rowAttrs = (/** @type {HeadRoleEntry} */ e) => ({ class: e.layer === o.layer ? 'current' : '', 'data-layer': String(e.layer), 'data-head': String(e.head) });
  const relationRows = table.heads.map((e) => el('tr', rowAttrs(e),
    el('th', { scope: 'row', text: headName(e) }),
    ...rel.map((r) => {
      const v = e.relations[r];
      const beats = v.ci[0] > v.baseline.score;
      const button = el('button', { type: 'button', class: 'cell', text: interval(v), 'data-relation': r, 'aria-label': `${headName(e)} ${labelName(r)}: ${interval(v)}; show the test items` });
      button.addEventListener('click', () => renderItems(items, table, e, r));
      return el('td', { class: beats ? 'strong' : '' }, button);
    }),
    el('td', { class: 'label', text: labelName(e.label) })));
  const baselineRow = el('tr', { class: 'baseline' }, el('th', { scope: 'row', text: 'strongest baseline' }),
    ...rel.map((r) => el('td', { text: `${f2(table.rule.relations[r].strongest.score)} ${table.rule.relations[r].strongest.name}` })), el('td', { text: '' }));
  const countRow = el('tr', { class: 'baseline' }, el('th', { scope: 'row', text: 'test items' }),
    ...rel.map((r) => el('td', { text: String(table.rule.relations[r].n) })), el('td', { text: '' }));
  const roleRows = table.heads.map((e) => el('tr', rowAttrs(e),
    el('th', { scope: 'row', text: headName(e) }),
    ...roles.map((r) => el('td', { class: e.roles[r].ci[0] >= table.rule.roles[r].threshold ? 'strong' : '', text: interval(e.roles[r]) }))));
  const thresholdRow = el('tr', { class: 'baseline' }, el('th', { scope: 'row', text: 'threshold (dev)' }),
    ...roles.map((r) => el('td', { text: f2(table.rule.roles[r].threshold) })));
  const uniformRow = el('tr', { class: 'baseline' }, el('th', { scope: 'row', text: 'uniform attention' }),
    ...roles.map((r) => el('td', { text: f2(table.rule.roles[r].uniform.test) })));
  const { split } = table.corpus;
  const hidden = notVisibleText(table);
  const children = [
    el('p', { class: 'roles-summary', id: 'roles-summary', text: rolesSummary(table, { visibility: false }) }),
    ...(hidden ? [el('p', { class: 'note', id: 'roles-not-visible', text: hidden })] : []),
    el('div', { class: 'table-wrap', tabIndex: 0, role: 'region', 'aria-label': 'What each head does: relations' },
      el('table', { class: 'roles-table', id: 'roles-table' },
        el('caption', { text: `Relations, on the test half (${split.test} of ${table.corpus.sentences} ${table.source === 'trained' ? 'sentences of its grammar' : 'hand-annotated sentences'}): how often the word a head weights most (the query word's pieces averaged, a word's pieces summed, the query word itself aside) is the annotated one, with its 95% bootstrap interval (${table.rule.resamples} resamples over sentences). Marked: the low end beats the strongest baseline (best fixed offset and best position, chosen on the dev half; first noun; nearest noun before; nearest agreeing noun before). Click a score for its items.` }),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'head' }), ...rel.map((r) => el('th', { scope: 'col', text: labelName(r) })), el('th', { scope: 'col', text: 'label' }))),
        el('tbody', {}, ...relationRows, baselineRow, countRow))),
    items,
    el('div', { class: 'table-wrap', tabIndex: 0, role: 'region', 'aria-label': 'What each head does: roles' },
      el('table', { class: 'roles-table', id: 'roles-shares' },
        el('caption', { text: `Roles: a head's mean share of a row on each place, with its 95% interval. Marked: the low end clears the role's threshold (${table.rule.roleFloor}, or ${table.rule.roleUniformFactor} × what uniform attention gives on dev if more). Heads named by nothing are broad (mean normalised entropy over ${table.rule.broadEntropy}) or mixed.` }),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'head' }), ...roles.map((r) => el('th', { scope: 'col', text: labelName(r) })))),
        el('tbody', {}, ...roleRows, thresholdRow, uniformRow))),
  ];
  if (o.measure) {
    const status = el('p', { id: 'roles-measure-status', role: 'status', class: 'note', text: o.note ?? 'This table was computed by npm run roles from the model\'s weights; measure it here to compute it again in this page, with the same code.' });
    const button = el('button', { type: 'button', id: 'roles-measure', text: 'Measure it here' });
    const { measure } = o;
    button.addEventListener('click', async () => {
      button.disabled = true;
      const started = performance.now();
      try {
        const mine = await measure(({ done, total }) => { status.textContent = `Measuring: ${done} of ${total} sentences…`; });
        const differences = tableDifferences(table, mine);
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        status.textContent = differences.length
          ? `Measured here in ${seconds} s: the two differ (${differences.join(', ')}).`
          : `Measured here in ${seconds} s: the two agree; every figure, interval and label is the same.`;
        status.dataset.agree = String(!differences.length);
      } catch (error) {
        status.textContent = `Could not measure here: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        button.disabled = false;
      }
    });
    children.push(el('div', { class: 'roles-measure' }, button, status));
  }
  container.replaceChildren(...children);
}
