// The roles worker (started by measure-worker.js): it answers one request and is ended.
//   evaluate(sentences, heads, options)  evaluateHeads of evaluate.js
//   trained(weightsUrl)                  the trained model's table (measure.js trainedTable) from its weights file
// How far a measurement has gone is sent as messages of their own, { progress: { done, total } }.
import { serveRequests } from '../lib/rpc.js';
import { evaluateHeads } from './evaluate.js';

// a worker's global scope (the page's types know only Window's postMessage)
const scope = /** @type {{ postMessage(message: unknown): void }} */ (/** @type {unknown} */ (globalThis));

serveRequests(async (op, /** @type {any[]} */ args) => {
  if (op === 'evaluate') return evaluateHeads(args[0], args[1], args[2]);
  if (op === 'trained') {
    const [{ loadTrainer }, { trainedTable, TRAINED_HELD_OUT }] = await Promise.all([import('../lib/train.js'), import('./measure.js')]);
    const url = String(args[0]);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`The trained weights could not be loaded from ${new URL(url).pathname}: HTTP ${response.status}.`);
    const trainer = await loadTrainer({ seed: 1, heldOut: TRAINED_HELD_OUT });
    try {
      trainer.loadWeights(new Uint8Array(await response.arrayBuffer()));
      return await trainedTable(trainer, { onProgress: (progress) => scope.postMessage({ progress }) });
    } finally {
      trainer.dispose();
    }
  }
  throw new Error(`unknown request ${op}`);
});
