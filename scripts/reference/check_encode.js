// Checks `npm run encode -- --json` against the model's own TF.js tokenizer and graph on any
// sentences: give them on standard input, one per line (write your own).
//
//   node scripts/reference/check_encode.js < my-sentences.txt
//
// Runs scripts/commands/encode.js --json --truncate on them (the WebAssembly core, float32
// weights), then the reference (scripts/reference/use_lite_reference.js: the tokenizer of
// @tensorflow-models/universal-sentence-encoder, installed into build/reference on first use,
// and the graph on @tensorflow/tfjs-backend-cpu), and prints per sentence whether the ids are
// equal and the largest differences of attention weights (tolerance 1e-5) and embedding (1e-4).
// Exits with 1 if any sentence is off.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readModelPackage } from '../build/use-lite/package-files.js';
import { loadReferenceGraph, referenceTokenizer } from './use_lite_reference.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOLERANCE = { weights: 1e-5, embedding: 1e-4 };
const MAX_TOKENS = 128;

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks).toString('utf8');
const run = spawnSync(process.execPath, ['scripts/commands/encode.js', '--json', '--truncate'], { cwd: root, input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'inherit'] });
if (run.status !== 0) {
  console.error(`scripts/commands/encode.js failed (exit code ${run.status})`);
  process.exit(1);
}
const ours = run.stdout.toString('utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

const modelPackage = readModelPackage();
const tokenizer = referenceTokenizer(modelPackage.vocab);
const graph = await loadReferenceGraph({ backend: 'cpu', modelPackage });
let off = 0;
const worst = { weights: 0, embedding: 0 };
for (const line of ours) {
  const ids = tokenizer.encode(line.text);
  const idsEqual = JSON.stringify(ids) === JSON.stringify(line.truncated ? line.ids.concat(ids.slice(MAX_TOKENS)) : line.ids);
  const kept = ids.slice(0, MAX_TOKENS);
  const reference = await graph.run(kept);
  let weights = 0;
  if (kept.length > 0) {
    reference.weights.forEach((w, l) => {
      const flat = line.layers[l].weights.flat(2);
      for (let i = 0; i < w.length; ++i) weights = Math.max(weights, Math.abs(flat[i] - w[i]));
    });
  }
  let embedding = 0;
  reference.embedding.forEach((v, i) => { embedding = Math.max(embedding, Math.abs(v - line.embedding[i])); });
  const ok = idsEqual && weights <= TOLERANCE.weights && embedding <= TOLERANCE.embedding;
  if (!ok) off += 1;
  worst.weights = Math.max(worst.weights, weights);
  worst.embedding = Math.max(worst.embedding, embedding);
  console.log(`${ok ? 'OK ' : 'OFF'}  ids ${idsEqual ? 'equal' : `DIFFER (ours ${JSON.stringify(line.ids)}, reference ${JSON.stringify(ids)})`}, ` +
    `weights max |diff| ${weights.toExponential(2)}, embedding max |diff| ${embedding.toExponential(2)}  ${JSON.stringify(line.text).slice(0, 70)}`);
}
graph.dispose();
console.log(`\n${ours.length} sentences, ${off} off; largest differences: weights ${worst.weights.toExponential(2)} (tolerance ${TOLERANCE.weights.toExponential(0)}), embedding ${worst.embedding.toExponential(2)} (tolerance ${TOLERANCE.embedding.toExponential(0)})`);
process.exitCode = off ? 1 : 0;
