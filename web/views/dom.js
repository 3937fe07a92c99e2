// DOM helpers shared by every view, the page, the lesson, the train view and the element.

/** @typedef {Node | string | null | undefined | false} Child */
/** @typedef {Child | Child[]} Children */

const ATTRIBUTES = new Set(['role', 'for', 'scope', 'colspan', 'rowspan', 'part', 'href', 'download']);

/**
 * Create an element: el('p', { class: 'note', text: '…' }, child, …).
 * `class` and `text` set className and textContent; aria-*, data-* and a few HTML attributes
 * (role, for, scope, part, …) are set as attributes; `on<event>` functions become listeners;
 * anything else is set as a property. null, undefined and false props and children are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [props]
 * @param {Children[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  setProps(node, props);
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

/**
 * @param {HTMLElement} node
 * @param {Record<string, unknown>} props
 */
function setProps(node, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = String(value);
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'html') node.innerHTML = String(value);
    else if (key.startsWith('aria-') || key.startsWith('data-') || ATTRIBUTES.has(key)) node.setAttribute(key, String(value));
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (node))[key] = value;
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Create an SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {Children[]} children
 * @returns {SVGElement}
 */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'text') node.textContent = String(value);
    else if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

/**
 * Show an error's message in a node (role="alert" in the markup) and unhide it.
 * @param {HTMLElement} node
 * @param {unknown} error
 */
export function showError(node, error) {
  const message = error ? /** @type {{ message?: unknown }} */ (error).message : undefined;
  node.textContent = message ? String(message) : String(error);
  node.hidden = false;
}

/**
 * Offer a Blob as a download named `name`.
 * @param {Blob} blob
 * @param {string} name
 */
export function saveBlob(blob, name) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/**
 * Roving focus for a list of buttons (tabs, radios): the arrow keys, Home and End move, and
 * digits 1-9 jump when `digits` is set. Returns the index to select, or -1.
 * @param {KeyboardEvent} event
 * @param {number} current
 * @param {number} count
 * @param {{ digits?: boolean }} [options]
 * @returns {number}
 */
export function rovingTarget(event, current, count, { digits = false } = {}) {
  let next = -1;
  if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (current + 1) % count;
  if (event.key === 'ArrowLeft' || event.key === 'ArrowUp') next = (current - 1 + count) % count;
  if (event.key === 'Home') next = 0;
  if (event.key === 'End') next = count - 1;
  if (digits && /^[1-9]$/.test(event.key) && Number(event.key) <= count) next = Number(event.key) - 1;
  return next;
}
