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

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"]), [contenteditable="true"]';

/**
 * Keep every box under `root` that scrolls reachable by keyboard: a box whose content overflows
 * it (overflow auto or scroll) and that holds nothing focusable gets tabindex 0 (arrow keys then
 * scroll it) and, without a name of its own, role "region" and a name from its caption or the
 * nearest heading. Boxes stop being tab stops when they no longer scroll. Checked whenever root
 * changes size (the window is resized, content is drawn) and on request.
 * @param {Element} root
 * @returns {{ check(): void, disconnect(): void }}
 */
export function keepScrollersReachable(root) {
  let queued = false;
  const check = () => {
    queued = false;
    // every box read first, then the changes written: a write between two reads would make the
    // browser lay the page out again at the next read, once per box
    /** @type {[HTMLElement, boolean][]} */
    const changes = [];
    for (const box of /** @type {NodeListOf<HTMLElement>} */ (root.querySelectorAll('*'))) {
      const marked = box.hasAttribute('data-scroll-stop');
      if (!marked && (box.hasAttribute('tabindex') || box.matches(FOCUSABLE))) continue;
      const wide = box.scrollWidth > box.clientWidth + 1;
      const tall = box.scrollHeight > box.clientHeight + 1;
      let scrolls = false;
      if (wide || tall) {
        const style = getComputedStyle(box);
        scrolls = (wide && /(auto|scroll)/.test(style.overflowX)) || (tall && /(auto|scroll)/.test(style.overflowY));
      }
      const reachable = scrolls && !box.querySelector(FOCUSABLE);
      if (reachable !== marked) changes.push([box, reachable]);
    }
    for (const [box, reachable] of changes) {
      if (reachable) {
        box.setAttribute('data-scroll-stop', '');
        box.tabIndex = 0;
        if (!box.hasAttribute('role')) box.setAttribute('role', 'region');
        if (!box.hasAttribute('aria-label') && !box.hasAttribute('aria-labelledby')) box.setAttribute('aria-label', `${scrollerName(box)} (scrolls)`);
      } else {
        box.removeAttribute('data-scroll-stop');
        box.removeAttribute('tabindex');
      }
    }
  };
  const queue = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(check);
  };
  const observer = typeof ResizeObserver === 'function' ? new ResizeObserver(queue) : null;
  observer?.observe(root);
  globalThis.addEventListener?.('resize', queue);
  queue();
  return { check, disconnect: () => { observer?.disconnect(); globalThis.removeEventListener?.('resize', queue); } };
}

/** A name for a scrolling box: its figure's caption, else the nearest heading before it. @param {Element} box */
function scrollerName(box) {
  const caption = box.closest('figure')?.querySelector('figcaption')?.textContent?.trim();
  if (caption) return caption.slice(0, 80);
  /** @type {Element | null} */
  let node = box;
  for (; node; node = node.parentElement) {
    for (let s = node.previousElementSibling; s; s = s.previousElementSibling) {
      const heading = s.matches('h1, h2, h3, h4') ? s : s.querySelector('h1, h2, h3, h4');
      const text = heading?.textContent?.trim();
      if (text) return text.slice(0, 80);
    }
  }
  return 'Scrolling content';
}
