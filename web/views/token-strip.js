// The sentence as a strip of tokens: each a button with its text and tag; hover or focus
// highlights its row in every head, a click follows it (the W_O view). Tokens that share a
// word (subword pieces) sit together in one group, joined.
import { el } from './dom.js';

const handlers = new WeakMap();

/**
 * @param {HTMLOListElement} list
 * @param {{ tokens: { text: string, tag: string, details?: string[], className?: string, word?: number }[],
 *           onHover: (i: number) => void, onPick: (i: number) => void }} o  onHover(-1) when left
 */
export function renderTokenStrip(list, o) {
  handlers.set(list, o);
  const call = (/** @type {'onHover' | 'onPick'} */ name, /** @type {number} */ i) => handlers.get(list)[name](i);
  const button = (/** @type {typeof o.tokens[number]} */ t, /** @type {number} */ i) => {
    const b = el('button', { type: 'button', 'data-index': String(i), title: (t.details || []).join(' · ') || undefined },
      el('span', { class: 'token-text', text: t.text }), el('span', { class: 'token-tag', text: t.tag }));
    b.addEventListener('mouseenter', () => call('onHover', i));
    b.addEventListener('focus', () => call('onHover', i));
    b.addEventListener('mouseleave', () => call('onHover', -1));
    b.addEventListener('blur', () => call('onHover', -1));
    b.addEventListener('click', () => call('onPick', i));
    return b;
  };
  /** @type {{ word: number | undefined, node: HTMLLIElement }[]} */
  const items = [];
  o.tokens.forEach((t, i) => {
    const previous = items[items.length - 1];
    if (t.word !== undefined && previous && previous.word === t.word) {
      previous.node.classList.add('pieces');
      previous.node.append(button(t, i));
      return;
    }
    items.push({ word: t.word, node: el('li', { class: `token ${t.className || ''}`.trim() }, button(t, i)) });
  });
  list.replaceChildren(...items.map((item) => item.node));
}

/**
 * Mark token i (or none, -1) as the highlighted one.
 * @param {HTMLElement} list
 * @param {number} i
 */
export function highlightToken(list, i) {
  /** @type {NodeListOf<HTMLButtonElement>} */ (list.querySelectorAll('button[data-index]')).forEach((b) => {
    b.classList.toggle('active', Number(b.dataset.index) === i);
  });
}
