// The example page's own script: an event log, and a wide model computed in a Web Worker.
/** @typedef {import('../element/mha-explorer.js').MhaExplorerEventMap} Events */

/** The page's element with this id: the markup has every id asked for here. */
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const log = $('log');

/** @param {string} text */
function note(text) {
  const item = document.createElement('li');
  item.textContent = text;
  log.prepend(item);
}

/**
 * Listen on the document for an element's event (they bubble out of its shadow root).
 * @template {keyof Events} K
 * @param {K} type
 * @param {(event: Events[K], id: string) => void} listener  id: the element's
 */
function onElement(type, listener) {
  document.addEventListener(type, (event) => listener(/** @type {Events[K]} */ (event), /** @type {HTMLElement} */ (event.target).id));
}

onElement('mha-computed', (event, id) => {
  const d = event.detail;
  note(`#${id} computed: ${d.numHeads} heads × ${d.tokens.length} tokens, d_model ${d.dModel}, ${d.ms.toFixed(1)} ms${d.worker ? ' in a Web Worker' : ''}`);
});
onElement('mha-head-selected', (event, id) => note(`#${id} head-selected: ${event.detail.name}`));
onElement('mha-error', (event, id) => note(`#${id} error: ${event.detail.message}`));

// A counter driven by requestAnimationFrame while the wide model computes: it stalls if the main
// thread is blocked, and stops (and stops drawing) once the model is shown.
const ticker = $('ticker');
let frames = 0;
let ticking = false;
const tick = () => {
  if (!ticking) return;
  frames += 1;
  ticker.textContent = String(frames);
  requestAnimationFrame(tick);
};

$('big-start').addEventListener('click', () => {
  const slot = $('big-slot');
  const big = document.createElement('mha-explorer');
  big.id = 'big';
  for (const [name, value] of Object.entries({ heads: 'random:1', 'd-model': '2048', 'num-heads': '16', view: 'grid', worker: 'auto' })) {
    big.setAttribute(name, value);
  }
  const stop = () => { ticking = false; };
  big.addEventListener('mha-computed', stop, { once: true });
  big.addEventListener('mha-error', stop, { once: true });
  frames = 0;
  ticker.textContent = '0';
  if (!ticking) {
    ticking = true;
    requestAnimationFrame(tick);
  }
  slot.replaceChildren(big);
});
