// The model section of `npm run bench`: a checkpoint run end to end (ids ->
// logits and every layer's attention weights) on this project's mha_models.wasm and on
// onnxruntime-web (1 and 2 threads) running the same checkpoint exported to ONNX
// (bench/model/cases.js). A full run times GPT-2 small's and SmolLM2-135M's shapes at 128 tokens,
// making their files first when they are missing (about a minute each, with PyTorch); `--quick` the
// golden test's small GPT-2 at 32 tokens. Logits and attention weights are cross-checked to
// 1e-4 before timing; each job runs in a process of its own (bench/model/worker.js); jobs run in
// rounds, each engine keeping its fastest round.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { benchDir, repoRoot, runJob as runJobIn } from '../data.js';

const runJob = (job) => runJobIn('model/worker.js', job);
import { MODEL_CASES, modelFlops } from './cases.js';
import { available, MODEL_ENGINES, OUR_ENGINES } from './engines.js';
import { modelBaseline } from '../markdown.js';
import { STEP_CASES } from './step.js';

/** [case, other engine, our engine on as many threads, the least other / ours]. */
export const MODEL_GOALS = [
  ['gpt2-small', 'onnxruntime-web', 'wasm', 1.25], ['gpt2-small', 'onnxruntime-web-2t', 'wasm-threads', 1.25],
  ['smollm2-135m', 'onnxruntime-web', 'wasm', 1.25], ['smollm2-135m', 'onnxruntime-web-2t', 'wasm-threads', 1.25],
];

/** Writes a case's random checkpoint and its ONNX export when they are missing. */
function makeCase(name, log) {
  const c = MODEL_CASES[name];
  if (!c.make || (fs.existsSync(path.join(c.dir, 'model.safetensors')) && fs.existsSync(c.onnx))) return;
  log(`[bench] writing a random ${name} checkpoint and its ONNX export into ${path.relative(repoRoot, c.dir)}`);
  for (const [command, ...args] of c.make) {
    const r = spawnSync(command === 'node' ? process.execPath : command, args, { encoding: 'utf8', cwd: repoRoot });
    if (r.status !== 0) {
      log(`[bench] ${args[0]} failed (the ${name} engines will be skipped): ${(r.stderr || r.error || '').toString().trim().split('\n').pop()}`);
      return;
    }
  }
}

/**
 * @param {{ quick: boolean, budgetMs: number, rounds: number, log: (...args) => void, fmt: (x, d?) => string }} opts
 * @returns {{ results: object[], goals: object[], skipped: object[], failures: number }}
 */
export function runModelBench({ quick, budgetMs, rounds, log, fmt }) {
  const caseNames = quick ? ['gpt2-tied'] : ['gpt2-small', 'smollm2-135m'];
  if (!quick) for (const name of caseNames) makeCase(name, log);
  fs.mkdirSync(benchDir, { recursive: true });
  const skipped = [];
  const jobs = [];
  for (const name of caseNames) {
    const modelCase = MODEL_CASES[name];
    const engines = MODEL_ENGINES.filter((e) => {
      const why = available(e, modelCase);
      if (why !== true) skipped.push({ engine: e, shape: name, reason: why });
      return why === true;
    });
    const refFile = path.join(benchDir, `model_ref_${name}.f32`);
    fs.rmSync(refFile, { force: true });
    jobs.push({ name, modelCase, engines, refFile, haveRef: false, best: new Map(), failed: new Set() });
  }
  let failures = 0;
  for (let round = 1; round <= rounds; ++round) {
    for (const job of jobs) {
      for (const engine of job.engines) {
        if (job.failed.has(engine)) continue;
        const r = runJob({ engine, case: job.name, budgetMs, refFile: job.refFile, writeRef: !job.haveRef });
        if (r.error) {
          // a wrong output, or this project's engine failing, fails the run
          if (r.mismatch || OUR_ENGINES.includes(engine) || !job.haveRef) failures++;
          job.failed.add(engine);
          log(`[bench] model ${job.name} ${engine}: FAILED: ${r.error}`);
          continue;
        }
        job.haveRef = true;
        const diffs = r.max_err == null ? ', reference' : `, max |diff| logits ${r.max_err.toExponential(1)}, attention ${r.max_err_attention.toExponential(1)}`;
        log(`[bench] model ${job.name} T=${job.modelCase.tokens} ${engine.padEnd(19)} ${fmt(r.ms, 3).padStart(9)} ms  (${rounds > 1 ? `round ${round}, ` : ''}${r.runs} runs, min ${fmt(r.min_ms, 3)} ms${diffs}${r.peak_heap_mb != null ? `, heap ${fmt(r.peak_heap_mb, 0)} MB` : ''})`);
        const entry = job.best.get(engine) ?? { r: null, roundMs: [] };
        entry.roundMs.push(r.ms);
        if (!entry.r || r.ms < entry.r.ms) entry.r = r;
        job.best.set(engine, entry);
      }
    }
  }
  const results = [];
  for (const job of jobs) {
    const flops = modelFlops(job.modelCase.config, job.modelCase.tokens);
    for (const [engine, { r, roundMs }] of job.best) {
      if (job.failed.has(engine)) continue;
      results.push({ engine, case: job.name, tokens: job.modelCase.tokens, ms: r.ms, gflops: flops / (r.ms * 1e6), min_ms: r.min_ms, runs: r.runs,
        max_err: r.max_err, max_err_attention: r.max_err_attention, peak_heap_mb: r.peak_heap_mb, round_ms: roundMs });
    }
  }
  const get = (engine, name) => results.find((r) => r.engine === engine && r.case === name);
  const goals = MODEL_GOALS.filter(([name]) => caseNames.includes(name)).map(([name, other, ours, need]) => {
    const o = get(other, name);
    const w = get(ours, name);
    const value = o && w ? o.ms / w.ms : null;
    return { goal: `${name}: ${other} / ${ours} >= ${need}`, value, met: value == null ? null : value >= need, shown: (v) => `${fmt(v)}×` };
  });
  // writing on: one cached step against a whole run (bench/model/step.js)
  const stepCase = STEP_CASES[quick ? 'quick' : 'full'];
  let step = null;
  if (fs.existsSync(path.join(MODEL_CASES[stepCase.case].dir, 'model.safetensors'))) {
    step = runJobIn('model/step.js', { ...stepCase, budgetMs });
    if (step.error) {
      failures++;
      log(`[bench] model step ${stepCase.case}: FAILED: ${step.error}`);
      step = null;
    } else {
      log(`[bench] model step ${step.case}: one cached step at ${step.cached} tokens ${fmt(step.step_ms, 3)} ms (${step.step_runs} runs), a whole run at ${step.tokens} ${fmt(step.run_ms, 3)} ms (${step.run_runs} runs): ${(100 * step.ratio).toFixed(2)}%, max |diff| ${step.max_err.toExponential(1)}`);
      goals.push({ goal: `${step.case}: one cached step at ${step.cached} tokens <= 1/10 of a whole run at ${step.tokens} (wasm)`, value: step.ratio, met: step.ratio <= 0.1,
        shown: (v) => `${(100 * v).toFixed(2)}% (${fmt(step.step_ms)} ms vs ${fmt(step.run_ms)} ms)` });
    }
  } else {
    skipped.push({ engine: 'wasm step', shape: stepCase.case, reason: 'its model.safetensors is missing' });
  }
  return { results, goals, skipped, failures, step };
}

/** The model table: median ms per forward (GFLOP/s) and the ratios to this project's core. */
export function printModelTable(results, fmt) {
  if (results.length === 0) return;
  const pad = (t, n) => String(t).padStart(n);
  console.log('\nmodel: ids → logits + every layer\'s attention weights; median ms per forward (GFLOP/s) [ratio to ours on as many threads]\n');
  console.log(`${'case'.padEnd(18)}${MODEL_ENGINES.map((e) => pad(e, 26)).join('')}`);
  for (const name of new Set(results.map((r) => r.case))) {
    const cells = MODEL_ENGINES.map((e) => {
      const r = results.find((x) => x.engine === e && x.case === name);
      if (!r) return pad('', 26);
      const ours = results.find((x) => x.engine === modelBaseline(e) && x.case === name);
      return pad(`${fmt(r.ms)} (${fmt(r.gflops, 1)})${e === 'wasm' || !ours ? '' : ` [${fmt(r.ms / ours.ms)}×]`}`, 26);
    });
    console.log(`${`${name} T=${results.find((r) => r.case === name).tokens}`.padEnd(18)}${cells.join('')}`);
  }
}
