// The styles of <mha-explorer>, adopted by its shadow root as a constructable stylesheet
// (no <style> element, no inline markup: this works under `style-src 'self'`).
// Colours are the page's (web/views/palette.js); a host page can override any --mha-* custom
// property from outside.
//
// Why some rules are as they are (kept out of the CSS text, which the embed downloads as it is):
//   :host { overflow: hidden }   the frame inside scrolls: a host that scrolls is a tab stop of its
//                                own in Firefox, and Tab then stays inside it
//   .frame > * { flex-shrink: 0 } in a fixed height, the parts keep their own heights and the frame
//                                scrolls: a part that shrank below its content would draw that
//                                content over the parts after it
//   .status { flex: none }       the status line stays in view at the bottom of a fixed height while
//                                the views scroll above it
import { elementPaletteCss } from '../views/palette.js';

export const ELEMENT_CSS = `${elementPaletteCss()}
:host {
  display: flex;
  flex-direction: column;
  position: relative;
  box-sizing: border-box;
  width: 100%;
  min-width: 0;
  overflow: hidden;
  background: var(--mha-bg);
  color: var(--mha-text);
  font: 14px/1.45 var(--mha-font);
  border: 1px solid var(--mha-border);
  border-radius: 10px;
  color-scheme: light;
  contain: content;
}
:host([hidden]) { display: none; }
[hidden] { display: none !important; }
:host(.dark) { color-scheme: dark; }
* { box-sizing: border-box; }
button, input, select { font: inherit; color: inherit; }
select { background: var(--mha-bg); border: 1px solid var(--mha-border); border-radius: 6px; }
:focus-visible { outline: 3px solid var(--mha-focus); outline-offset: 2px; }
.frame { padding: 0.75rem 0.75rem 0.3rem; display: flex; flex-direction: column; gap: 0.6rem; flex: 1 1 auto; min-height: 0; overflow: auto; }
.frame > * { flex-shrink: 0; }
.toolbar { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; justify-content: space-between; }
.sentence-form { display: flex; gap: 0.4rem; flex: 1 1 16rem; min-width: 0; }
.sentence-form input { flex: 1; min-width: 0; padding: 0.3rem 0.5rem; border: 1px solid var(--mha-border); border-radius: 6px; background: transparent; }
button { cursor: pointer; border: 1px solid var(--mha-border); background: transparent; border-radius: 6px; padding: 0.3rem 0.6rem; }
button:hover { border-color: var(--mha-accent); }
.views { display: inline-flex; border: 1px solid var(--mha-border); border-radius: 6px; overflow: hidden; }
.views button { border: 0; border-radius: 0; }
.views button[aria-pressed="true"] { background: var(--mha-accent); color: var(--mha-bg); }
.tabs { display: flex; flex-wrap: wrap; gap: 0.3rem; }
.head-tab { font-size: 0.85em; padding: 0.2rem 0.5rem; display: inline-flex; gap: 0.35rem; align-items: baseline; }
.head-tab[aria-selected="true"] { background: var(--mha-accent-soft); border-color: var(--mha-accent); font-weight: 600; }
.tab-id { font-weight: 700; }
.body { position: relative; min-height: 120px; }
.single { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-start; }
.single .info { flex: 1 1 13rem; min-width: 12rem; }
.single .info h4 { margin: 0 0 0.3rem; font-size: 1.05em; }
.single .info h5 { margin: 0.5rem 0 0.1rem; font-size: 0.75em; text-transform: uppercase; letter-spacing: 0.04em; color: var(--mha-muted); }
.single .info p { margin: 0.2rem 0 0.4rem; }
.single .info .note { color: var(--mha-muted); }
.canvas-wrap { position: relative; }
.tooltip { position: absolute; pointer-events: none; background: var(--mha-text); color: var(--mha-bg); padding: 0.15rem 0.45rem; border-radius: 6px; font-size: 0.85em; white-space: nowrap; z-index: 2; }
.stats { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0.3rem; margin: 0; }
.stat { display: flex; flex-direction: column-reverse; border: 1px solid var(--mha-border); border-radius: 6px; padding: 0.2rem 0.4rem; }
.stat dt { color: var(--mha-muted); font-size: 0.8em; }
.stat dd { margin: 0; font-weight: 700; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; }
:host(.dark) .ok { color: #56d364; }
.bad { color: var(--mha-bad); }
.guess { font-weight: 600; }
.caution { border-left: 3px solid var(--mha-highlight); padding-left: 0.5rem; }
.grid { display: grid; grid-template-columns: repeat(var(--mha-columns, 4), minmax(0, 1fr)); gap: 0.5rem; }
.multiple { display: flex; flex-direction: column; align-items: flex-start; justify-content: flex-start; gap: 0.2rem; padding: 0.35rem; text-align: left; }
.multiple[aria-pressed="true"] { border-color: var(--mha-highlight); box-shadow: 0 0 0 1px var(--mha-highlight); }
.multiple-title { font-size: 0.8em; line-height: 1.2; }
.multiple.kv-alt { background: var(--mha-accent-soft); }
.pair-kv { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; flex-basis: 100%; }
.pair-kv p { margin: 0; }
.pair-kv[hidden] { display: none; }
.pair-controls { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: center; font-size: 0.85em; }
.pair-maps { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-start; margin-top: 0.5rem; }
.compare figure { margin: 0; display: flex; flex-direction: column; gap: 0.25rem; }
.compare figcaption, .note { font-size: 0.85em; color: var(--mha-muted); }
.legend { display: inline-flex; gap: 0.3rem; align-items: center; }
.legend canvas { border: 1px solid var(--mha-border); }
.jsd, .pair-cell { margin: 0; flex-basis: 100%; }
canvas { display: block; max-width: 100%; }
.status { flex: none; min-height: 1.2em; margin: 0; padding: 0.3rem 0.75rem 0.75rem; font-size: 0.85em; color: var(--mha-muted); background: var(--mha-bg); }
.error { color: var(--mha-bad); }
.progress { position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center; justify-content: center; gap: 0.4rem;
  background: color-mix(in srgb, var(--mha-bg) 80%, transparent); font-size: 0.9em; }
.progress[hidden] { display: none; }
.bar { width: min(60%, 240px); height: 6px; border-radius: 3px; background: var(--mha-border); overflow: hidden; }
.bar::after { content: ""; display: block; width: 35%; height: 100%; background: var(--mha-accent); animation: slide 1.1s ease-in-out infinite; }
@keyframes slide { from { transform: translateX(-100%); } to { transform: translateX(290%); } }
@media (prefers-reduced-motion: reduce) { .bar::after { animation: none; width: 100%; opacity: 0.6; } }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
