// Formatting helpers and small controls shared by the lesson's sections (the DOM helpers are
// the views' own, web/views/dom.js).
import { el } from '../../views/dom.js';
import { themeColors } from '../../views/theme.js';

export { el, svg } from '../../views/dom.js';

/**
 * A lesson section: <section class="lesson-section" id=…><h2>…</h2> …</section>.
 * @param {string} id
 * @param {string} title
 * @param {import('../../views/dom.js').Children[]} children
 */
export function section(id, title, ...children) {
  return el('section', { class: 'lesson-section', id, 'aria-labelledby': `${id}-title` },
    el('h2', { id: `${id}-title`, text: title }), ...children);
}

/**
 * A box that scrolls sideways when its table or figure is wider than the page: a tab stop named
 * by `label`, so that a keyboard can scroll it too (WCAG 2.1.1; axe's scrollable-region-focusable).
 * @param {string} className
 * @param {string} label
 * @param {Node} child
 */
export function scroller(className, label, child) {
  return el('div', { class: className, tabIndex: 0, role: 'region', 'aria-label': label }, child);
}

/** @type {Map<string, Promise<void>>} */
const stylesheets = new Map();
/**
 * The stylesheet at `href` in the document, once; resolves when it has loaded or failed to (the
 * page reads unstyled then).
 * @param {string} href
 * @returns {Promise<void>}
 */
export function stylesheet(href) {
  let loaded = stylesheets.get(href);
  if (!loaded) {
    loaded = new Promise((resolve) => {
      if ([...document.styleSheets].some((s) => s.href === href)) return resolve();
      const link = el('link', { rel: 'stylesheet', href });
      link.addEventListener('load', () => resolve());
      link.addEventListener('error', () => resolve());
      document.head.append(link);
    });
    stylesheets.set(href, loaded);
  }
  return loaded;
}

/** Fixed decimals with a real minus sign. @param {number} value @param {number} [digits] */
export function fmt(value, digits = 2) {
  if (!Number.isFinite(value)) return String(value);
  const text = value.toFixed(digits);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text.replace('-', '−');
}

// one formatter: toLocaleString builds a new one (its locale data looked up) at every call
const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
/** 1234567 -> "1,234,567". @param {number} value */
export function int(value) {
  return INTEGER.format(Math.round(value));
}

/** FLOPs or bytes in a short human form: 1.2 M, 3.4 G. @param {number} value @param {string} [unit] */
export function short(value, unit = '') {
  /** @type {[number, string][]} */
  const steps = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [size, prefix] of steps) {
    if (Math.abs(value) >= size) return `${(value / size).toFixed(value / size >= 100 ? 0 : 1)} ${prefix}${unit}`;
  }
  return `${Math.round(value)} ${unit}`.trim();
}

/** Bytes with binary prefixes: 4 KiB, 2.5 GiB. @param {number} value */
export function bytes(value) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = value;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u += 1; }
  const digits = u === 0 || Number.isInteger(v) ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${units[u]}`;
}

export { themeColors } from '../../views/theme.js';

/** Call fn whenever the page's theme (data-theme on <html>) changes. @param {(theme: import('../../views/theme.js').Theme) => void} fn */
export function onThemeChange(fn) {
  const observer = new MutationObserver(() => fn(themeColors()));
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return observer;
}

/** Euclidean norm of values[offset .. offset + n). @param {ArrayLike<number>} values @param {number} [offset] @param {number} [n] */
export function norm(values, offset = 0, n = values.length - offset) {
  let sum = 0;
  for (let k = 0; k < n; k += 1) sum += values[offset + k] * values[offset + k];
  return Math.sqrt(sum);
}

/** Largest |a − b| over two arrays of equal length. @param {ArrayLike<number>} a @param {ArrayLike<number>} b */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`maxAbsDiff: lengths differ (${a.length} vs ${b.length})`);
  let m = 0;
  for (let k = 0; k < a.length; k += 1) m = Math.max(m, Math.abs(a[k] - b[k]));
  return m;
}

/**
 * A radio group of buttons (role=radio): options [{ value, label }]; onChange(value).
 * @template V
 * @param {string} name
 * @param {{ value: V, label: string }[]} options
 * @param {V} value
 * @param {(value: V) => void} onChange
 * @param {string} label
 */
export function segmented(name, options, value, onChange, label) {
  const group = el('div', { class: 'segmented', role: 'radiogroup', 'aria-label': label, 'data-name': name });
  const buttons = options.map((o) => el('button', {
    type: 'button', role: 'radio', class: 'segment', 'data-value': String(o.value), text: o.label,
    'aria-checked': String(o.value === value), tabIndex: o.value === value ? 0 : -1,
  }));
  const select = (/** @type {number} */ i, /** @type {boolean} */ focus) => {
    buttons.forEach((b, k) => { b.setAttribute('aria-checked', String(k === i)); b.tabIndex = k === i ? 0 : -1; });
    if (focus) buttons[i].focus();
    onChange(options[i].value);
  };
  buttons.forEach((b, i) => b.addEventListener('click', () => select(i, false)));
  group.addEventListener('keydown', (event) => {
    const i = buttons.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    if (i < 0) return;
    /** @type {number | undefined} */
    const next = /** @type {Record<string, number>} */ ({ ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: buttons.length - 1 })[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select((next + buttons.length) % buttons.length, true);
  });
  group.append(...buttons);
  return group;
}
