// Colours for canvas drawing, read from CSS custom properties: the page's (--text, --grid, …
// on <html>) or an element's own (--mha-text, … on the element, prefix 'mha-').

/** @typedef {ReturnType<typeof themeColors>} Theme */

/**
 * @param {Element} [node]
 * @param {string} [prefix]
 * @returns {{text:string, muted:string, grid:string, highlight:string, accent:string, panel:string, border:string, font:string}}
 */
export function themeColors(node = document.documentElement, prefix = '') {
  const css = getComputedStyle(node);
  const v = (/** @type {string} */ name) => css.getPropertyValue(`--${prefix}${name}`).trim();
  return {
    text: v('text'), muted: v('muted'), grid: v('grid'), highlight: v('highlight'), accent: v('accent'),
    panel: v('panel'), border: v('border'), font: v(prefix ? 'font' : 'font-sans') || 'system-ui, sans-serif',
  };
}
