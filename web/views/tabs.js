// The head tabs: one tab per head ("H3 · previous"), the selected one in the tab order, arrow
// keys, Home, End and digits 1-9 to move. The visible text is the accessible name.
import { el, rovingTarget } from './dom.js';

const handlers = new WeakMap(); // tablist -> the latest { count, onSelect }

/**
 * @param {HTMLElement} tablist  an element with role="tablist"
 * @param {{ count: number, selected: number, shortOf: (h: number) => string, titleOf: (h: number) => string,
 *           panelId?: string, idPrefix?: string, onSelect: (h: number, how: { focus: boolean }) => void }} o
 */
export function renderHeadTabs(tablist, o) {
  const names = Array.from({ length: o.count }, (_, h) => o.shortOf(h));
  const key = names.join('\u0000');
  if (tablist.dataset.names !== key) {
    tablist.dataset.names = key;
    tablist.replaceChildren(...names.map((name, h) => el('button', {
      type: 'button', role: 'tab', class: 'head-tab', id: o.idPrefix ? `${o.idPrefix}${h}` : undefined,
      'aria-controls': o.panelId, 'data-head': String(h + 1), title: o.titleOf(h),
      onclick: () => handlers.get(tablist).onSelect(h, { focus: false }),
    }, el('span', { class: 'tab-id', text: `H${h + 1}` }), el('span', { class: 'tab-name', text: name }))));
  }
  if (!handlers.has(tablist)) {
    tablist.addEventListener('keydown', (event) => {
      const { count, selected, onSelect } = handlers.get(tablist);
      const next = rovingTarget(event, selected, count, { digits: true });
      if (next < 0) return;
      event.preventDefault();
      onSelect(next, { focus: true });
    });
  }
  handlers.set(tablist, o);
  [.../** @type {HTMLCollectionOf<HTMLElement>} */ (tablist.children)].forEach((tab, h) => {
    tab.setAttribute('aria-selected', String(h === o.selected));
    tab.tabIndex = h === o.selected ? 0 : -1;
    tab.title = o.titleOf(h);
  });
}

/**
 * Move keyboard focus to head h's tab.
 * @param {HTMLElement} tablist
 * @param {number} h
 */
export function focusHeadTab(tablist, h) {
  /** @type {HTMLElement | null} */ (tablist.querySelector(`[data-head="${h + 1}"]`))?.focus();
}
