// A head's statistics as a description list: one .stat (dt, dd) per row, the help as a tooltip.
import { el } from './dom.js';

/** @param {HTMLDListElement} list  @param {[string, string, string?][]} rows [name, value, help] */
export function renderStatistics(list, rows) {
  list.replaceChildren(...rows.map(([name, value, help]) => el('div', { class: 'stat', title: help },
    el('dt', { text: name }), el('dd', { text: value }))));
}
