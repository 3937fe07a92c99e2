// Head importance timed against the slow path it replaces, on a GPT-2 checkpoint folder:
// model.headImportance(ids) (the layers below each head run once, the LM head at the T - 1
// positions with a next token) beside one whole model.run(ids, { ablate: [[l, h]] }) per head
// with the log-softmax in JavaScript; prints both times (the best of --repeat) and their largest
// difference.
//
//   node bench/head-importance.js tests/golden/models/gpt2-trained --tokens 24 --repeat 20
//   node bench/head-importance.js build/bench/gpt2-small --tokens 32     (npm run bench writes it)
import path from 'node:path';
import { loadModel } from '../web/lib/models.js';
import { modelInput } from './model/cases.js';

function parseArgs(argv) {
  const opts = { dir: null, tokens: 32, repeat: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const number = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a}: expected a whole number >= 1, got ${argv[i]}`);
      return v;
    };
    if (a === '--tokens') opts.tokens = number();
    else if (a === '--repeat') opts.repeat = number();
    else if (!a.startsWith('--') && !opts.dir) opts.dir = a;
    else throw new Error(`unknown option ${a}; usage: node bench/head-importance.js MODEL_DIR [--tokens N] [--repeat N]`);
  }
  if (!opts.dir) throw new Error('usage: node bench/head-importance.js MODEL_DIR [--tokens N] [--repeat N]');
  return opts;
}

/** log p(ids[t + 1]) for t < T - 1 from logits (T, V), in double. */
function nextTokenLogprobs(logits, ids, V) {
  const out = [];
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    let max = -Infinity;
    for (const v of row) max = Math.max(max, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    out.push(row[ids[t + 1]] - max - Math.log(sum));
  }
  return out;
}

function slowHeadImportance(model, ids) {
  const { numLayers: L, numHeads: H, vocabSize: V } = model.config;
  const base = nextTokenLogprobs(model.run(ids).logits.data, ids, V);
  const out = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const lp = nextTokenLogprobs(model.run(ids, { ablate: [[l, h]] }).logits.data, ids, V);
      out.push(lp.reduce((s, v, t) => s + base[t] - v, 0) / lp.length);
    }
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const model = await loadModel(path.resolve(opts.dir));
  const { numLayers: L, numHeads: H, vocabSize: V } = model.config;
  const ids = modelInput(opts.tokens, V);
  const time = (f) => {
    let best = Infinity, value;
    for (let r = 0; r < opts.repeat; r++) {
      const t0 = performance.now();
      value = f();
      best = Math.min(best, performance.now() - t0);
    }
    return { best, value };
  };
  const fast = time(() => model.headImportance(ids).data);
  const slow = time(() => slowHeadImportance(model, ids));
  const diff = Math.max(...slow.value.map((v, i) => Math.abs(v - fast.value[i])));
  const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`${opts.dir}: ${L} x ${H} heads, ${opts.tokens} tokens; headImportance ${ms(fast.best)} ms, a whole run per head ${ms(slow.best)} ms (${(slow.best / fast.best).toFixed(2)}x); max |diff| ${diff.toExponential(2)}`);
  model.dispose();
}

main().catch((error) => {
  console.error(`[bench] ${error.message}`);
  process.exitCode = 1;
});
