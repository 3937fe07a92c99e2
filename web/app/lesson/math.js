// KaTeX, loaded only when a formula comes near the screen: the stylesheet and the module are
// vendored into web/vendor/katex/ by scripts/build/vendor.js (no CDN).

const KATEX_DIR = new URL('../../vendor/katex/', import.meta.url);
/** @typedef {{ render(tex: string, node: HTMLElement, options: object): void }} Katex */
/** @type {Promise<Katex> | null} */
let katexPromise = null;

/** @returns {Promise<Katex>} */
function loadKatex() {
  if (!katexPromise) {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('katex.min.css', KATEX_DIR).href;
    document.head.append(link);
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
