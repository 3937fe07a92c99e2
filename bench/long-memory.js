// The models' WebAssembly module's memory for a text as long as GPT-2's context: GPT-2 small's
// shape (the random checkpoint of build/bench/gpt2-small, which `npm run bench -- --model-only`
// writes), 1,024 random ids, run as the page runs a text (head outputs, every layer's maps
// max-pooled to 128 a side, the full maps of one layer kept) and, for comparison, keeping every
// layer's maps. Each in a Node.js process of its own (a module's memory only grows), single
// thread: the module's size after the run, what the run's results hold, and the run's time.
//
//   node bench/long-memory.js [--json]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const DIR = path.join(repoRoot, 'build', 'bench', 'gpt2-small');
const TOKENS = 1024;
const MODES = { layer: { weightsLayer: 0, pooledSize: 128, headOutputs: true }, all: { headOutputs: true } };

/** One mode in this process: load, run, measure. @param {keyof typeof MODES} mode */
async function measure(mode) {
  const { loadModel } = await import(path.join(repoRoot, 'web', 'lib', 'models.js'));
  const files = { 'config.json': fs.readFileSync(path.join(DIR, 'config.json')), 'model.safetensors': fs.readFileSync(path.join(DIR, 'model.safetensors')) };
  const model = await loadModel(files, { threads: false });
  const { vocabSize } = model.config;
  let seed = 1;
  const ids = Array.from({ length: TOKENS }, () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % vocabSize; });
  const t0 = performance.now();
  model.run(ids, MODES[mode]);
  const runMs = performance.now() - t0;
  const memory = model.memory();
  model.dispose();
  return { mode, tokens: TOKENS, runMs, ...memory };
}

/** Both modes, each in a child process. */
export function benchLongMemory() {
  if (!fs.existsSync(path.join(DIR, 'model.safetensors'))) {
    throw new Error(`${path.relative(repoRoot, DIR)}/model.safetensors is missing: npm run bench -- --model-only writes it`);
  }
  return Object.keys(MODES).map((mode) => {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (child.status !== 0) throw new Error(`long-memory (${mode}): ${child.stderr || child.stdout}`);
    return JSON.parse(child.stdout.trim().split('\n').pop() ?? '');
  });
}

const mb = (/** @type {number} */ bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    console.log(JSON.stringify(await measure(/** @type {keyof typeof MODES} */ (args[1]))));
  } else {
    const results = benchLongMemory();
    if (args.includes('--json')) console.log(JSON.stringify(results));
    else {
      for (const r of results) {
        console.log(`GPT-2 small's shape, ${r.tokens} tokens, ${r.mode === 'layer' ? 'one layer\'s maps kept, every layer pooled (the page)' : 'every layer\'s maps kept'}: module ${mb(r.moduleBytes)} (weights ${mb(r.weightBytes)}, the run's results ${mb(r.resultBytes)}), run ${(r.runMs / 1000).toFixed(1)} s`);
      }
    }
  }
}
