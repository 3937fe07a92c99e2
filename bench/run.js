// `npm run bench`: the forward pass of multi-head attention timed on every engine, side by side.
//
//   npm run bench                      full run (builds the native engines, exports the ONNX
//                                      models when /usr/bin/python3 has torch), under 12 minutes
//                                      (the model section about 80 s, and 30 s more the first
//                                      time, to write GPT-2 small's checkpoint and export)
//   npm run bench -- --quick           shape A only, short budgets, nothing built (under 30 s;
//                                      engines whose files are missing are skipped, and said so)
//   npm run bench -- --json            one JSON object on stdout instead of the tables
//   npm run bench -- --shapes B,C --engines wasm,tfjs-wasm --budget-ms 3000
//   npm run bench -- --rounds 3        rounds of every engine's job (default 2; --quick 1)
//   npm run bench -- --no-encoder      without the pretrained encoder's section (--encoder-only: only it)
//   npm run bench -- --no-model        without the model section (--model-only: only it)
//   npm run bench -- --long-only       only a 1,024-token text: the page's model view in Chromium, GPT-2 small's module
//
// Engines: wasm, wasm-threads (the pthreads core, 2 threads), native-sse2, native-march,
// onnxruntime-web, onnxruntime-web-2t, tfjs-wasm, js, and wasm-simd-peak (the machine's f32x4
// multiply+add peak, bench/simd_peak.js). Shapes A-E (bench/shapes.js), batch 1, self-attention.
// Every engine gets the same weights and input; its output must match the `wasm` engine's to
// 1e-3 before it is timed. Each timing job runs in a process of its own (bench/worker.js): the
// median of at least 5 runs after warm-up. Jobs run in rounds over the whole run (every shape's
// engines once per round); each engine keeps its fastest round. GFLOP/s counts 8·L·E² + 4·L²·E per forward.
// Then the pretrained encoder (bench/encoder/run.js): Universal Sentence Encoder lite at 12 and
// 128 tokens (--quick: 12) on mha_encoder.wasm against its own TF.js graph on tfjs-wasm and tfjs-cpu.
// Then the page's model view in Chromium (bench/model-view.js; not under --quick). Before it, the model section (bench/model/run.js): GPT-2 small's shape at 128 tokens, ids -> logits
// and every layer's attention weights, on mha_models.wasm against onnxruntime-web (1 and 2
// threads) on the same checkpoint exported to ONNX (--quick: the golden tests' small GPT-2).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir, repoRoot, writeShapeFiles } from './data.js';
import { modelPath } from './engines/ort.js';
import { flops, SHAPES, WEIGHTS_SHAPES } from './shapes.js';
import { printEncoderTable, runEncoderBench } from './encoder/run.js';
import { printModelTable, runModelBench } from './model/run.js';
import { benchModelView } from './model-view.js';
import { benchLongMemory } from './long-memory.js';
import { engineAvailable } from './worker.js';

const ALL_ENGINES = [
  'wasm', 'wasm-threads', 'native-sse2', 'native-march', 'onnxruntime-web', 'onnxruntime-web-2t',
  'tfjs-wasm', 'js',
];
const OUR_ENGINES = new Set(['wasm', 'wasm-threads', 'native-sse2', 'native-march']);
// Plain JS at E takes about a minute per forward: it is left out there.
const SKIP = { js: { E: 'one forward takes about a minute in plain JS' } };

function parseArgs(argv) {
  const opts = { quick: false, json: false, shapes: null, engines: null, budgetMs: null, rounds: null, encoder: true, attention: true, model: true, long: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--no-encoder') opts.encoder = false;
    else if (a === '--encoder-only') {
      opts.attention = false;
      opts.model = false;
    } else if (a === '--no-model') opts.model = false;
    else if (a === '--model-only') {
      opts.attention = false;
      opts.encoder = false;
    } else if (a === '--long-only') {
      opts.attention = false;
      opts.encoder = false;
      opts.model = false;
    }
    else if (a === '--json') opts.json = true;
    else if (a === '--shapes') opts.shapes = value().split(',');
    else if (a === '--engines') opts.engines = value().split(',');
    else if (a === '--budget-ms') opts.budgetMs = Number(value());
    else if (a === '--rounds') {
      opts.rounds = Number(value());
      if (!Number.isInteger(opts.rounds) || opts.rounds < 1) throw new Error(`--rounds: expected a whole number of rounds >= 1, got ${argv[i]}`);
    }
    else throw new Error(`unknown option ${a}; usage: npm run bench -- [--quick] [--json] [--shapes A,B] [--engines wasm,js] [--budget-ms N] [--rounds N] [--no-encoder | --encoder-only] [--no-model | --model-only | --long-only]`);
  }
  for (const s of opts.shapes ?? []) if (!SHAPES[s]) throw new Error(`unknown shape ${s}; expected one of ${Object.keys(SHAPES).join(', ')}`);
  for (const e of opts.engines ?? [])
    if (!ALL_ENGINES.includes(e) && e !== 'wasm-simd-peak') throw new Error(`unknown engine ${e}; expected one of ${[...ALL_ENGINES, 'wasm-simd-peak'].join(', ')}`);
  return opts;
}

function machine() {
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  return `${cpu}, ${os.cpus().length} cores, ${os.platform()} ${os.release()}, Node.js ${process.version}`;
}

// The 1-minute load average: on a shared machine it says how far the timings are from an idle one.
const loadAverage = () => os.loadavg()[0].toFixed(1);

function log(opts, ...args) {
  if (!opts.json) console.log(...args);
  else console.error(...args);
}

function run(cmd, args, options = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', cwd: repoRoot, maxBuffer: 1 << 26, ...options });
}

/** Builds build/bench-sse2 and build/bench-march (the presets of those names: mha_bench only). */
function buildNative(opts) {
  const builds = [['bench-sse2', 'sse2'], ['bench-march', 'native']];
  for (const [preset, arch] of builds) {
    const dir = `build/${preset}`;
    log(opts, `[bench] building ${dir}/mha_bench (-O3 ${arch === 'sse2' ? '-msse2' : '-march=native'})`);
    const b = run('cmake', ['--workflow', '--preset', preset]);
    if (b.status !== 0) {
      // Without this the engine would time the binary of an earlier build.
      fs.rmSync(path.join(repoRoot, dir, 'mha_bench'), { force: true });
      log(opts, `[bench] building ${dir} failed (its engine is skipped):\n${b.stdout.slice(-2000)}${b.stderr.slice(-2000)}`);
    }
  }
}

/** Exports the ONNX models the shapes need (with /usr/bin/python3 + torch), if missing. */
function exportOnnx(opts, shapeNames) {
  const done = new Set();
  for (const name of shapeNames) {
    const { E, H } = SHAPES[name];
    const model = modelPath(E, H);
    if (done.has(model) || fs.existsSync(model)) continue;
    done.add(model);
    const { weightsFile } = writeShapeFiles(name, SHAPES[name]);
    log(opts, `[bench] exporting torch.nn.MultiheadAttention(${E}, ${H}) to ${path.relative(repoRoot, model)}`);
    const r = run('/usr/bin/python3', ['scripts/export/export_onnx.py', '--embed-dim', String(E), '--num-heads', String(H),
      '--weights', weightsFile, '--out', model]);
    if (r.status !== 0) log(opts, `[bench] ONNX export failed (onnxruntime-web will be skipped): ${(r.stderr || r.error || '').toString().trim().split('\n').pop()}`);
  }
}

function runJob(job) {
  const r = run(process.execPath, [path.join(repoRoot, 'bench/worker.js'), JSON.stringify(job)], { timeout: 900_000 });
  const line = (r.stdout || '').trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: `worker exited with ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}` };
  }
}

function measurePeak(opts) {
  const script = `import('${path.join(repoRoot, 'bench/simd_peak.js')}').then(m => m.measureSimdPeak(${opts.quick ? '{ msPerTry: 40, rounds: 4 }' : '{ msPerTry: 60, rounds: 20 }'})).then(r => console.log(JSON.stringify(r)))`;
  const r = run(process.execPath, ['--input-type=module', '-e', script]);
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } catch {
    return { error: r.stderr.trim() };
  }
}

const fmt = (x, digits = 2) => (x == null || !Number.isFinite(x) ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(digits));

function printTables(opts, results, peak, engines, shapeNames) {
  const get = (engine, shape, nw) => results.find((r) => r.engine === engine && r.shape === shape && r.need_weights === nw && r.ms != null);
  const rows = [];
  for (const s of shapeNames) {
    rows.push([s, false]);
    if (WEIGHTS_SHAPES.has(s)) rows.push([s, true]);
  }
  const pad = (t, n) => String(t).padStart(n);
  const cols = engines.filter((e) => results.some((r) => r.engine === e && r.ms != null));
  console.log(`\nmedian ms per forward (GFLOP/s), batch 1, self-attention; ${machine()}; load average ${opts.loadAtStart} at the start, ${loadAverage()} at the end`);
  console.log(`wasm-simd-peak: ${fmt(peak?.gflops)} GFLOP/s (f32x4 mul+add, ${peak?.chains ?? '?'} independent chains)\n`);
  const w = 20;
  console.log(`${'shape'.padEnd(22)}${cols.map((c) => pad(c, w)).join('')}`);
  for (const [s, nw] of rows) {
    const { L, E, H } = SHAPES[s];
    const label = `${s} L=${L} E=${E} H=${H}${nw ? ' +w' : ''}`.padEnd(22);
    const cells = cols.map((c) => {
      const r = get(c, s, nw);
      return pad(r ? `${fmt(r.ms)} (${fmt(r.gflops, 1)})` : '', w);
    });
    console.log(label + cells.join(''));
  }
  console.log(`\nratios (time of the other engine / time of wasm; > 1 means wasm is faster), wasm heap\n`);
  const ratioCols = ['onnxruntime-web', 'onnxruntime-web-2t', 'tfjs-wasm', 'js', 'native-sse2', 'native-march'];
  console.log(`${'shape'.padEnd(22)}${ratioCols.map((c) => pad(c, 19)).join('')}${pad('% of simd peak', 16)}${pad('heap MB', 10)}`);
  for (const [s, nw] of rows) {
    const ours = get('wasm', s, nw);
    if (!ours) continue;
    const label = `${s}${nw ? ' +w' : ''}`.padEnd(22);
    const cells = ratioCols.map((c) => {
      const r = get(c, s, nw) ?? (nw ? null : null);
      return pad(r ? `${fmt(r.ms / ours.ms)}×` : '', 19);
    });
    const pct = peak?.gflops ? (100 * ours.gflops) / peak.gflops : null;
    console.log(label + cells.join('') + pad(pct == null ? '' : `${fmt(pct, 0)}%`, 16) + pad(fmt(ours.peak_heap_mb, 1), 10));
  }
}

function goals(results, peak) {
  const get = (engine, shape) => results.find((r) => r.engine === engine && r.shape === shape && !r.need_weights && r.ms != null);
  const out = [];
  const ratio = (other, s) => {
    const o = get(other, s), w = get('wasm', s);
    return o && w ? o.ms / w.ms : null;
  };
  const goal = (text, value, ok, shown) => out.push({ goal: text, value, met: value == null ? null : ok(value), shown });
  for (const [other, needA, needBCD] of [['onnxruntime-web', 2, 1.25], ['tfjs-wasm', 5, 1.25]]) {
    goal(`${other} / wasm at A >= ${needA}`, ratio(other, 'A'), (v) => v >= needA, (v) => `${fmt(v)}×`);
    for (const s of ['B', 'C', 'D']) goal(`${other} / wasm at ${s} >= ${needBCD}`, ratio(other, s), (v) => v >= needBCD, (v) => `${fmt(v)}×`);
  }
  for (const s of ['B', 'C', 'D']) {
    const w = get('wasm', s);
    goal(`wasm at ${s} >= 60% of wasm-simd-peak`, w && peak?.gflops ? w.gflops / peak.gflops : null, (v) => v >= 0.6, (v) => `${fmt(100 * v, 0)}%`);
  }
  const a = get('wasm', 'A');
  goal('wasm at A <= 20 µs per forward', a ? a.ms * 1000 : null, (v) => v <= 20, (v) => `${fmt(v, 1)} µs`);
  const e = get('wasm', 'E');
  goal('wasm heap at E (need_weights false) <= 64 MB', e ? e.peak_heap_mb : null, (v) => v <= 64, (v) => `${fmt(v, 1)} MB`);
  for (const s of ['C', 'D']) {
    const t = get('wasm-threads', s), w = get('wasm', s);
    goal(`wasm-threads at ${s} >= 1.7× wasm`, t && w ? w.ms / t.ms : null, (v) => v >= 1.7, (v) => `${fmt(v)}×`);
    const o = get('onnxruntime-web-2t', s);
    goal(`wasm-threads faster than onnxruntime-web-2t at ${s}`, t && o ? o.ms / t.ms : null, (v) => v > 1, (v) => `${fmt(v)}×`);
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const loadAtStart = loadAverage();
  const shapeNames = !opts.attention ? [] : opts.shapes ?? (opts.quick ? ['A'] : Object.keys(SHAPES));
  const engines = !opts.attention ? [] : (opts.engines ?? ALL_ENGINES).filter((e) => e !== 'wasm-simd-peak');
  const budgetMs = opts.budgetMs ?? (opts.quick ? 100 : 1500);
  const rounds = opts.rounds ?? (opts.quick ? 1 : 2);
  fs.mkdirSync(benchDir, { recursive: true });

  if (!opts.quick) {
    if (engines.some((e) => e.startsWith('native'))) buildNative(opts);
    if (engines.some((e) => e.startsWith('onnxruntime'))) exportOnnx(opts, shapeNames);
  }

  const results = [];
  const skipped = [];
  let failures = 0;
  let peak = null;
  if (opts.attention && (!opts.engines || opts.engines.includes('wasm-simd-peak'))) {
    peak = measurePeak(opts);
    if (peak.error) {
      skipped.push({ engine: 'wasm-simd-peak', reason: peak.error });
      peak = null;
    } else {
      results.push({ engine: 'wasm-simd-peak', shape: null, need_weights: null, ms: null, gflops: peak.gflops, peak_heap_mb: null });
      log(opts, `[bench] wasm-simd-peak ${fmt(peak.gflops)} GFLOP/s (chains: ${Object.entries(peak.perChains).map(([c, g]) => `${c}: ${fmt(g)}`).join(', ')})`);
    }
  }

  // Rounds span the whole run: every shape's jobs once per round, round after round, so that a
  // slow spell of a shared machine (it can last minutes) falls on one round of a shape, not on
  // all of them, and on every engine of that round alike; each engine keeps its fastest round.
  const jobs = [];  // one entry per (shape, need_weights)
  for (const s of shapeNames) {
    writeShapeFiles(s, SHAPES[s]);
    const refFile = path.join(benchDir, `ref_${s}.f32`);
    fs.rmSync(refFile, { force: true });
    const state = { refFile, haveRef: false };
    for (const nw of WEIGHTS_SHAPES.has(s) ? [false, true] : [false]) jobs.push({ s, nw, state, best: new Map(), failed: new Set() });
  }
  for (let round = 1; round <= rounds; round++) {
    for (const { s, nw, state, best, failed } of jobs) {
      const shape = SHAPES[s];
      for (const engine of engines) {
        if ((nw && !OUR_ENGINES.has(engine)) || failed.has(engine)) continue;
        const why = SKIP[engine]?.[s] ?? (await engineAvailable(engine, shape));
        if (why !== true) {
          if (round === 1) {
            if (!skipped.some((k) => k.engine === engine && k.reason === why)) skipped.push({ engine, shape: s, reason: why });
            log(opts, `[bench] ${s}${nw ? ' +w' : ''} ${engine}: skipped (${why})`);
          }
          continue;
        }
        // The first engine to run a shape writes the reference output; the rest must match it.
        const job = { engine, shape: s, needWeights: nw, budgetMs, refFile: state.refFile, writeRef: !state.haveRef };
        const r = runJob(job);
        if (r.error) {
          // A wrong output, or this project's engine failing, fails the run; another engine that
          // cannot run a shape (e.g. out of memory at E) is reported and the run goes on.
          if (r.mismatch || OUR_ENGINES.has(engine) || !state.haveRef) failures++;
          failed.add(engine);
          log(opts, `[bench] ${s}${nw ? ' +w' : ''} ${engine}: FAILED: ${r.error}`);
          results.push({ engine, shape: s, need_weights: nw, ms: null, gflops: null, peak_heap_mb: null, error: r.error });
          continue;
        }
        state.haveRef = true;
        const gflops = flops(shape) / (r.ms * 1e6);
        log(opts, `[bench] ${s}${nw ? ' +w' : ''} ${engine.padEnd(19)} ${fmt(r.ms, 3).padStart(9)} ms  ${fmt(gflops, 1).padStart(6)} GFLOP/s  (${rounds > 1 ? `round ${round}, ` : ''}${r.runs} runs, min ${fmt(r.min_ms, 3)} ms${r.max_err == null ? ', reference' : `, max |diff| ${r.max_err.toExponential(1)}`}${r.peak_heap_mb != null ? `, heap ${fmt(r.peak_heap_mb, 1)} MB` : ''})`);
        const entry = best.get(engine) ?? { r: null, roundMs: [] };
        entry.roundMs.push(r.ms);
        if (!entry.r || r.ms < entry.r.ms) entry.r = { ...r, gflops };
        best.set(engine, entry);
      }
    }
  }
  for (const { s, nw, best, failed } of jobs) {
    for (const engine of engines) {
      const entry = best.get(engine);
      if (!entry || failed.has(engine)) continue;
      const { r } = entry;
      results.push({ engine, shape: s, need_weights: nw, ms: r.ms, gflops: r.gflops, peak_heap_mb: r.peak_heap_mb, min_ms: r.min_ms, runs: r.runs, max_err: r.max_err, round_ms: entry.roundMs });
    }
  }

  const encoder = opts.encoder
    ? runEncoderBench({ quick: opts.quick, budgetMs, rounds, log: (...a) => log(opts, ...a), fmt })
    : { results: [], goals: [], skipped: [], failures: 0 };
  failures += encoder.failures;
  skipped.push(...encoder.skipped);
  const model = opts.model
    ? runModelBench({ quick: opts.quick, budgetMs, rounds, log: (...a) => log(opts, ...a), fmt })
    : { results: [], goals: [], skipped: [], failures: 0, step: null };
  failures += model.failures;
  skipped.push(...model.skipped);
  // the page's model view (144 maps) timed in Chromium: a full run only (it launches the browser).
  // A section that throws is a failure of the bench, not a skip: skips are for engines whose
  // files are missing.
  let modelView = null;
  /** @type {{ section: string, error: string }[]} */
  const broken = [];
  if (opts.model && !opts.quick) {
    try {
      log(opts, '[bench] the model view of a 12 × 12 GPT-2 in Chromium (bench/model-view.js)');
      modelView = await benchModelView();
    } catch (error) {
      failures += 1;
      broken.push({ section: 'model view (Chromium)', error: error instanceof Error ? error.message.split('\n')[0] : String(error) });
      log(opts, `[bench] the model view failed: ${broken[broken.length - 1].error}`);
    }
  }
  // a text as long as GPT-2's context: the model view at 1,024 tokens, and the module's memory
  // for GPT-2 small's shape (its checkpoint is written by the model section)
  let longView = null;
  let longMemory = null;
  if (opts.long && !opts.quick) {
    try {
      log(opts, '[bench] the model view of a 12 × 12 GPT-2 at 1,024 tokens in Chromium (bench/model-view.js --tokens 1024)');
      longView = await benchModelView({ tokens: 1024, draws: 10 });
    } catch (error) {
      failures += 1;
      broken.push({ section: 'model view at 1,024 tokens (Chromium)', error: error instanceof Error ? error.message.split('\n')[0] : String(error) });
      log(opts, `[bench] the model view at 1,024 tokens failed: ${broken[broken.length - 1].error}`);
    }
    try {
      log(opts, '[bench] GPT-2 small\'s module at 1,024 tokens (bench/long-memory.js)');
      longMemory = benchLongMemory();
    } catch (error) {
      failures += 1;
      broken.push({ section: 'module memory at 1,024 tokens', error: error instanceof Error ? error.message.split('\n')[0] : String(error) });
      log(opts, `[bench] the memory at 1,024 tokens failed: ${broken[broken.length - 1].error}`);
    }
  }
  const pageRun = longMemory?.find((r) => r.mode === 'layer');
  const viewGoals = [...(modelView ? [{
    goal: `the page's model view: ${modelView.cells} maps at ${modelView.tokens} tokens drawn in Chromium in < 100 ms (median of ${modelView.draws})`,
    value: modelView.medianMs, met: modelView.medianMs < 100, shown: (/** @type {number} */ v) => `${fmt(v, 1)} ms`,
  }] : []), ...(longView ? [{
    goal: `the page's model view: ${longView.cells} maps at ${longView.tokens} tokens drawn in Chromium in <= 500 ms (the first draw)`,
    value: longView.firstMs, met: longView.firstMs <= 500, shown: (/** @type {number} */ v) => `${fmt(v, 1)} ms`,
  }] : []), ...(pageRun ? [{
    goal: `GPT-2 small's shape at ${pageRun.tokens} tokens, run as the page runs it: the models' module < 1 GB`,
    value: pageRun.moduleBytes, met: pageRun.moduleBytes < 1e9, shown: (/** @type {number} */ v) => `${(v / 1e6).toFixed(0)} MB`,
  }] : [])];

  const seconds = (Date.now() - started) / 1000;
  const goalList = [...(opts.attention ? goals(results, peak) : []), ...encoder.goals, ...model.goals, ...viewGoals];
  const report = {
    machine: machine(),
    load_average: { start: Number(loadAtStart), end: Number(loadAverage()) },
    command: `npm run bench --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
    seconds,
    rounds,
    results: results.map(({ engine, shape, need_weights, ms, gflops, peak_heap_mb, round_ms, error }) => ({ engine, shape, need_weights, ms, gflops, peak_heap_mb, ...(round_ms ? { round_ms } : {}), ...(error ? { error } : {}) })),
    encoder: encoder.results,
    model: model.results.map(({ engine, case: name, tokens, ms, gflops, max_err, max_err_attention, peak_heap_mb, round_ms }) => ({ engine, case: name, tokens, ms, gflops, max_err, max_err_attention, peak_heap_mb, round_ms })),
    model_step: model.step,
    model_view: modelView,
    long_view: longView,
    long_memory: longMemory,
    goals: goalList.map(({ goal, value, met }) => ({ goal, value, met })),
    skipped,
    failed_sections: broken,
  };
  fs.writeFileSync(path.join(benchDir, opts.quick ? 'last-quick.json' : 'last.json'), `${JSON.stringify(report, null, 1)}\n`);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    if (opts.attention) printTables({ ...opts, loadAtStart }, results, peak, engines, shapeNames);
    printEncoderTable(encoder.results, fmt);
    printModelTable(model.results, fmt);
    // --quick's budgets are too short to warm every engine up: its ratios check that the goals are
    // computed, not whether they are met
    console.log(opts.quick
      ? '\ngoals (--quick: 100 ms budgets, engines not warmed up; a full `npm run bench` measures them)'
      : '\ngoals (single thread unless stated; ratios from this run)');
    for (const g of goalList) console.log(`  ${g.met == null ? 'n/a ' : g.met ? 'MET ' : 'NOT '} ${g.goal}: ${g.value == null ? 'not measured' : g.shown(g.value)}`);
    if (skipped.length) {
      console.log('\nskipped');
      for (const k of skipped) console.log(`  ${k.engine}${k.shape ? ` (${k.shape})` : ''}: ${k.reason}`);
    }
    if (broken.length) {
      console.log('\nfailed');
      for (const b of broken) console.log(`  ${b.section}: ${b.error}`);
    }
    console.log(`\n${results.filter((r) => r.ms != null).length + encoder.results.length + model.results.length} timed, ${failures} failed, in ${seconds.toFixed(0)} s`);
  }
  process.exitCode = failures > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(`[bench] ${error.message}`);
  process.exitCode = 2;
});
