// The example page's own script: an event log, and a wide model computed in a Web Worker.
const log = document.getElementById('log');

function note(text) {
  const item = document.createElement('li');
  item.textContent = text;
  log.prepend(item);
}

document.addEventListener('mha-computed', (event) => {
  const d = event.detail;
  note(`#${event.target.id} computed: ${d.numHeads} heads × ${d.tokens.length} tokens, d_model ${d.dModel}, ${d.ms.toFixed(1)} ms${d.worker ? ' in a Web Worker' : ''}`);
});
document.addEventListener('mha-head-selected', (event) => note(`#${event.target.id} head-selected: ${event.detail.name}`));
document.addEventListener('mha-error', (event) => note(`#${event.target.id} error: ${event.detail.message}`));

// A counter driven by requestAnimationFrame: it stalls if the main thread is blocked.
const ticker = document.getElementById('ticker');
let frames = 0;
const tick = () => {
  frames += 1;
  ticker.textContent = String(frames);
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);

document.getElementById('big-start').addEventListener('click', () => {
  const slot = document.getElementById('big-slot');
  const big = document.createElement('mha-explorer');
  big.id = 'big';
  for (const [name, value] of Object.entries({ heads: 'random:1', 'd-model': '2048', 'num-heads': '16', view: 'grid', worker: 'auto' })) {
    big.setAttribute(name, value);
  }
  slot.replaceChildren(big);
});
