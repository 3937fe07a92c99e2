// What each head does, as a table: heads down, roles and relations across (mean share on a role,
// accuracy on a relation with the best fixed-offset baseline beneath), each head's label last.
// Cells that clear their bar are marked.
import { el } from './dom.js';

/**
 * @param {HTMLElement} container
 * @param {{ table: import('../sources/source.js').HeadRoles, roles: string[], roleNames: Record<string, string>,
 *           relations: string[], relationNames: Record<string, string>, layer?: number }} o
 *   table: head-roles.js measureHeads' result; layer: the layer shown, whose rows are marked
 */
export function renderRolesTable(container, o) {
  const { table } = o;
  const t = table.thresholds;
  const head = el('tr', {}, el('th', { scope: 'col', text: 'head' }),
    ...o.roles.map((r) => el('th', { scope: 'col', text: o.roleNames[r] })),
    ...o.relations.map((r) => el('th', { scope: 'col', text: o.relationNames[r] })),
    el('th', { scope: 'col', text: 'label' }));
  const rows = table.heads.map((e) => el('tr', { class: e.layer === o.layer ? 'current' : '', 'data-layer': String(e.layer), 'data-head': String(e.head) },
    el('th', { scope: 'row', text: `L${e.layer} H${e.head + 1}` }),
    ...o.roles.map((r) => el('td', { class: e.roles[r] >= t.role ? 'strong' : '', text: e.roles[r].toFixed(2) })),
    ...o.relations.map((r) => el('td', {
      class: e.relations[r] >= t.relation && e.relations[r] > table.baselines[r].accuracy ? 'strong' : '', text: e.relations[r].toFixed(2),
    })),
    el('td', { class: 'label', text: e.label })));
  const baseline = el('tr', { class: 'baseline' }, el('th', { scope: 'row', text: 'best fixed offset' }),
    ...o.roles.map(() => el('td', { text: '' })),
    ...o.relations.map((r) => el('td', { text: `${table.baselines[r].accuracy.toFixed(2)} (${table.baselines[r].offset >= 0 ? '+' : ''}${table.baselines[r].offset})` })),
    el('td', { text: '' }));
  const counts = o.relations.map((r) => `${o.relationNames[r]} ${table.baselines[r].count}`).join(', ');
  container.replaceChildren(
    el('div', { class: 'table-wrap', tabIndex: 0, role: 'region', 'aria-label': 'What each head does' },
      el('table', { class: 'roles-table', id: 'roles-table' },
        el('caption', { text: `Over ${table.sentences} sentences (${table.aligned} tagged and aligned with the model's pieces; relations found: ${counts}). Roles: mean share of a query row; a head is named by one at ${t.role} or more. Relations: how often the head's largest weight (words: pieces of the query averaged, of the key summed) falls on the right word; named at ${t.relation} or more and above the baseline of the best fixed offset. Other heads are broad (normalised entropy over ${t.broad}) or mixed.` }),
        el('thead', {}, head), el('tbody', {}, ...rows, baseline))));
}
