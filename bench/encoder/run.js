// The encoder section of `npm run bench`: Universal Sentence Encoder lite encoding token ids
// with every layer's attention weights and the embedding, at 12 tokens (the first example
// sentence) and 128 tokens, on this project's WebAssembly core and on the model's own TF.js
// graph with the wasm and cpu backends. Outputs are cross-checked to 1e-4 before timing; each
// job runs in a process of its own (bench/encoder/worker.js); jobs run in rounds, each engine
// keeping its fastest round. Ratios are of the median times of one run of this script.
import fs from 'node:fs';
import path from 'node:path';
import { benchDir, repoRoot, runJob as runJobIn } from '../data.js';

const runJob = (job) => runJobIn('encoder/worker.js', job);
import { available, ENCODER_ENGINES } from './engines.js';
import { ENCODER_TOKENS } from './input.js';

export const ENCODER_GOALS = [
  ['tfjs-wasm', 12, 5], ['tfjs-wasm', 128, 2], ['tfjs-cpu', 12, 10], ['tfjs-cpu', 128, 10],
];

/**
 * @param {{ quick: boolean, budgetMs: number, rounds: number, log: (...args) => void, fmt: (x, d?) => string }} opts
 * @returns {{ results: object[], goals: object[], skipped: object[], failures: number }}
 */
export function runEncoderBench({ quick, budgetMs, rounds, log, fmt }) {
  const tokenCounts = quick ? [12] : ENCODER_TOKENS;
  const skipped = [];
  const engines = ENCODER_ENGINES.filter((e) => {
    const why = available(e);
    if (why !== true) skipped.push({ engine: e, reason: why });
    return why === true;
  });
  fs.mkdirSync(benchDir, { recursive: true });
  const jobs = tokenCounts.map((tokens) => ({ tokens, refFile: path.join(benchDir, `encoder_ref_${tokens}.f32`), haveRef: false, best: new Map(), failed: new Set() }));
  let failures = 0;
  for (let round = 1; round <= rounds; ++round) {
    for (const job of jobs) {
      for (const engine of engines) {
        if (job.failed.has(engine)) continue;
        const r = runJob({ engine, tokens: job.tokens, budgetMs, refFile: job.refFile, writeRef: !job.haveRef });
        if (r.error) {
          // a wrong output, or this project's engine failing, fails the run
          if (r.mismatch || engine === 'encoder-wasm' || !job.haveRef) failures++;
          job.failed.add(engine);
          log(`[bench] encoder T=${job.tokens} ${engine}: FAILED: ${r.error}`);
          continue;
        }
        job.haveRef = true;
        log(`[bench] encoder T=${job.tokens} ${engine.padEnd(13)} ${fmt(r.ms, 3).padStart(9)} ms  (${rounds > 1 ? `round ${round}, ` : ''}${r.runs} runs, min ${fmt(r.min_ms, 3)} ms${r.max_err == null ? ', reference' : `, max |diff| ${r.max_err.toExponential(1)}`}${r.peak_heap_mb != null ? `, heap ${fmt(r.peak_heap_mb, 1)} MB` : ''})`);
        const entry = job.best.get(engine) ?? { r: null, roundMs: [] };
        entry.roundMs.push(r.ms);
        if (!entry.r || r.ms < entry.r.ms) entry.r = r;
        job.best.set(engine, entry);
      }
    }
  }
  const results = [];
  for (const job of jobs) {
    for (const [engine, { r, roundMs }] of job.best) {
      if (job.failed.has(engine)) continue;
      results.push({ engine, tokens: job.tokens, ms: r.ms, min_ms: r.min_ms, runs: r.runs, max_err: r.max_err, peak_heap_mb: r.peak_heap_mb, round_ms: roundMs });
    }
  }
  const get = (engine, tokens) => results.find((r) => r.engine === engine && r.tokens === tokens);
  const goals = ENCODER_GOALS.filter(([, tokens]) => tokenCounts.includes(tokens)).map(([other, tokens, need]) => {
    const o = get(other, tokens);
    const w = get('encoder-wasm', tokens);
    const value = o && w ? o.ms / w.ms : null;
    return { goal: `encoder: ${other} / encoder-wasm at ${tokens} tokens >= ${need}`, value, met: value == null ? null : value >= need, shown: (v) => `${fmt(v)}×` };
  });
  return { results, goals, skipped, failures };
}

/** The encoder's table: median ms per encoding and the ratios to this project's core. */
export function printEncoderTable(results, fmt) {
  if (results.length === 0) return;
  const tokens = [...new Set(results.map((r) => r.tokens))];
  const pad = (t, n) => String(t).padStart(n);
  console.log('\nencoder: Universal Sentence Encoder lite, ids → every layer\'s attention weights + embedding; median ms per encoding (ratio to encoder-wasm)\n');
  console.log(`${'tokens'.padEnd(10)}${ENCODER_ENGINES.map((e) => pad(e, 22)).join('')}`);
  for (const t of tokens) {
    const ours = results.find((r) => r.engine === 'encoder-wasm' && r.tokens === t);
    const cells = ENCODER_ENGINES.map((e) => {
      const r = results.find((x) => x.engine === e && x.tokens === t);
      if (!r) return pad('', 22);
      return pad(e === 'encoder-wasm' || !ours ? fmt(r.ms) : `${fmt(r.ms)} (${fmt(r.ms / ours.ms)}×)`, 22);
    });
    console.log(`${String(t).padEnd(10)}${cells.join('')}`);
  }
}
