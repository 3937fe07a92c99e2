// KaTeX, loaded while the lesson is built (prepareMath) and applied to a formula when it comes
// near the screen: its stylesheet, fonts and module are vendored into web/vendor/katex/ by
// scripts/build/vendor.js (no CDN).

import { stylesheet } from './dom.js';

const KATEX_DIR = new URL('../../vendor/katex/', import.meta.url);
const STYLESHEET = new URL('katex.min.css', KATEX_DIR).href;
/** @typedef {{ render(tex: string, node: HTMLElement, options: object): void }} Katex */
/** @type {Promise<Katex> | null} */
let katexPromise = null;

/** The faces the lesson's formulas are set in: the fonts the engines fetch once every formula is
 *  typeset (WebKit also fetches Main in bold, for formulas inside bold text). */
const FACES = ['1em KaTeX_Main', 'bold 1em KaTeX_Main', 'italic 1em KaTeX_Math', '1em KaTeX_AMS', '1em KaTeX_Size1', '1em KaTeX_Size3'];

/**
 * KaTeX, asked for before the lesson is built: its stylesheet, the fonts its formulas are set in,
 * then its module. A stylesheet or a web font arriving once the lesson is built would restyle the
 * whole page then (WebKit restyles every element when either comes; with the lesson, a page some
 * 18,000 px tall, that takes its main thread 100-300 ms each), and the module's evaluation would
 * come in the same task as the first formulas typeset, in the middle of whatever the reader is
 * doing. The formulas themselves are still typeset only when they come near the screen.
 */
export async function prepareMath() {
  await stylesheet(STYLESHEET);
  if (document.fonts) {
    // a style read: the engine takes in the new stylesheet, so that its @font-face rules are in
    // document.fonts for load() to find (WebKit otherwise may not have them yet)
    void getComputedStyle(document.documentElement).fontFamily;
    await Promise.all(FACES.map((face) => document.fonts.load(face).catch(() => [])));
  }
  await loadKatex().catch(() => null); // a formula that comes near the screen says why it failed
}

/** @returns {Promise<Katex>} */
function loadKatex() {
  if (!katexPromise) {
    stylesheet(STYLESHEET);
    katexPromise = import(new URL('katex.mjs', KATEX_DIR).href).then((m) => m.default);
  }
  return katexPromise;
}

/** @type {IntersectionObserver | null} */
let observer = null;
/** @type {Map<HTMLElement, string>} node -> its TeX, until typeset */
const pending = new Map();

/** @param {HTMLElement} node */
async function renderNow(node) {
  const tex = pending.get(node) ?? '';
  pending.delete(node);
  try {
    const katex = await loadKatex();
    katex.render(tex, node, { displayMode: node.dataset.display === 'true', throwOnError: true, output: 'htmlAndMathml' });
    node.classList.add('math-rendered');
  } catch (error) {
    // Keep the TeX source readable and say why it is not typeset.
    node.textContent = tex;
    node.classList.add('math-failed');
    node.title = `KaTeX could not be loaded (run "node scripts/build/vendor.js"): ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * A formula: shows its TeX source until KaTeX has been loaded (when it scrolls near view).
 * @param {string} tex
 * @param {{ display?: boolean, label?: string }} [options]
 */
export function math(tex, { display = false, label } = {}) {
  const node = document.createElement(display ? 'div' : 'span');
  node.className = display ? 'math math-display' : 'math';
  node.dataset.display = String(display);
  node.textContent = tex;
  if (label) node.setAttribute('aria-label', label);
  pending.set(node, tex);
  if (typeof IntersectionObserver !== 'function') {
    renderNow(node);
    return node;
  }
  if (!observer) {
    observer = new IntersectionObserver((entries, self) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        self.unobserve(entry.target);
        renderNow(/** @type {HTMLElement} */ (entry.target));
      }
    }, { rootMargin: '400px 0px' });
  }
  const watching = observer;
  // Observe once the node is in the document.
  requestAnimationFrame(() => { if (pending.has(node)) watching.observe(node); });
  return node;
}

/** Render every formula still waiting (for tests and printing). */
export function renderAllMath() {
  return Promise.all([...pending.keys()].map((node) => renderNow(node)));
}
