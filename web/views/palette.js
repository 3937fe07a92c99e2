// The explorer's colours and fonts, written once: the page's stylesheet (web/app/palette.css,
// written from this by the build) and <mha-explorer>'s shadow styles (web/element/styles.js)
// both take their custom properties from here. Every pair of text and background colours of a
// theme passes WCAG AA contrast (the accessibility tests check the pages drawn with them).

export const FONTS = {
  'font-sans': 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif',
  'font-mono': 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
};

export const PALETTE = {
  light: {
    bg: '#f6f7f9', panel: '#ffffff', text: '#1b1f24', muted: '#5a6470', border: '#d9dee5', grid: '#c9ced6',
    accent: '#3b4cc0', 'accent-soft': '#e7e9fb', highlight: '#e8590c', ok: '#1a7f37', bad: '#b42318', focus: '#0b66e4',
  },
  dark: {
    bg: '#12151a', panel: '#1b2027', text: '#e6e9ee', muted: '#9aa4b1', border: '#2e3641', grid: '#3a4350',
    accent: '#8fa2ff', 'accent-soft': '#27304a', highlight: '#ff922b', ok: '#4ac26b', bad: '#ff7b72', focus: '#6ea8ff',
  },
};

/** @param {[string, string][]} entries @param {string} prefix */
const declarations = (entries, prefix) => entries.map(([name, value]) => `  --${prefix}${name}: ${value};`).join('\n');

/** The page's custom properties: --bg, --text, … on :root, dark under [data-theme="dark"]. */
export function pagePaletteCss() {
  return `:root {\n${declarations(Object.entries({ ...FONTS, ...PALETTE.light }), '')}\n  --radius: 10px;\n  color-scheme: light;\n}\n\n` +
    `[data-theme="dark"] {\n${declarations(Object.entries(PALETTE.dark), '')}\n  color-scheme: dark;\n}\n`;
}

/** The element's: --mha-bg (a panel's colour), --mha-text, … on :host, dark on :host(.dark). */
export function elementPaletteCss() {
  const of = (/** @type {Record<string, string>} */ theme) => Object.entries({ ...theme, bg: theme.panel }).filter(([name]) => name !== 'panel' && name !== 'ok');
  return `:host {\n  --mha-font: ${FONTS['font-sans']};\n${declarations(of(PALETTE.light), 'mha-')}\n}\n` +
    `:host(.dark) {\n${declarations(of(PALETTE.dark), 'mha-')}\n  color-scheme: dark;\n}\n`;
}
