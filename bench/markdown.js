// Writes a bench report (the JSON `npm run bench` leaves in build/bench/last.json, or the output
// of `npm run bench -- --json`) as Markdown tables into docs/performance.md, replacing what lies
// between its two marker lines (BEGIN and END below), and the model section's table (GPT-2
// small, end to end) between MODEL_BEGIN and MODEL_END when the report has one; the rest of the
// page is left as it is.
//
//   node bench/markdown.js                          build/bench/last.json -> docs/performance.md
//   node bench/markdown.js REPORT.json [--doc FILE] another report, another page
//   node bench/markdown.js [REPORT.json] --stdout   print the tables instead of writing them
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHAPES } from './shapes.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BEGIN = '<!-- bench tables: begin (written by `node bench/markdown.js` from build/bench/last.json; edits here are replaced) -->';
export const END = '<!-- bench tables: end -->';
export const MODEL_BEGIN = '<!-- bench model table: begin (written by `node bench/markdown.js` from build/bench/last.json; edits here are replaced) -->';
export const MODEL_END = '<!-- bench model table: end -->';
const MODEL_ENGINES = ['wasm', 'wasm-threads', 'onnxruntime-web', 'onnxruntime-web-2t'];

/** The engine of ours an engine's time is compared with: the one on as many threads. */
export function modelBaseline(engine) {
  return engine === 'onnxruntime-web-2t' ? 'wasm-threads' : 'wasm';
}

const ENGINES = ['wasm', 'wasm-threads', 'native-sse2', 'native-march', 'onnxruntime-web', 'onnxruntime-web-2t', 'tfjs-wasm', 'js'];
const FLOPS_TEXT = '8·L·E² + 4·L²·E';

const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

/** The Markdown for one report: the run, the timings, the ratios and the goals. */
export function reportMarkdown(report) {
  if (!report || !Array.isArray(report.results)) {
    throw new Error(`expected a bench report with a "results" array (npm run bench -- --json), got ${report === null ? 'null' : typeof report}${report && typeof report === 'object' ? ` with keys ${Object.keys(report).join(', ') || 'none'}` : ''}`);
  }
  const results = report.results;
  const got = (e, s, nw) => results.find((r) => r.engine === e && r.shape === s && r.need_weights === nw && r.ms != null);
  const peak = results.find((r) => r.engine === 'wasm-simd-peak');
  const lines = [];
  const out = (line = '') => lines.push(line);

  const run = [];
  if (report.rounds != null) run.push(`${report.rounds} round${report.rounds === 1 ? '' : 's'}`);
  const jobs = results.reduce((n, r) => n + (r.round_ms?.length ?? 0), 0);
  if (jobs) run.push(`${jobs} timed jobs`);
  if (report.seconds != null) run.push(`${report.seconds.toFixed(0)} s`);
  const load = report.load_average ? `; 1-minute load average ${report.load_average.start} at the start, ${report.load_average.end} at the end` : '';
  const command = (report.command ?? 'npm run bench').replace(/ --$/, '');
  out(`\`${command}\`${run.length ? ` (${run.join(', ')})` : ''} on ${report.machine ?? 'an unnamed machine'}${load}.`);
  out(`Cells: the median ms per forward of each engine's fastest round (GFLOP/s, ${FLOPS_TEXT} per forward); \`weights\` = \`need_weights\` true.`);
  out();

  const cols = ENGINES.filter((e) => results.some((r) => r.engine === e && r.ms != null));
  out(`| shape | ${cols.join(' | ')} |`);
  out(`|---|${cols.map(() => '---:').join('|')}|`);
  for (const s of Object.keys(SHAPES)) {
    for (const nw of [false, true]) {
      if (!cols.some((e) => got(e, s, nw))) continue;
      const { L, E, H } = SHAPES[s];
      const cells = cols.map((e) => {
        const r = got(e, s, nw);
        return r ? `${ms(r.ms)} (${r.gflops.toFixed(1)})` : '';
      });
      out(`| ${s} L=${L} E=${E} H=${H}${nw ? ', weights' : ''} | ${cells.join(' | ')} |`);
    }
  }
  out();
  out(`wasm-simd-peak: ${peak ? `${peak.gflops.toFixed(1)} GFLOP/s` : 'not measured'}. Ratios: the other engine's time over this project's (> 1: ours is faster).`);
  out();
  out('| shape | onnxruntime-web / wasm | tfjs-wasm / wasm | js / wasm | wasm % of SIMD peak | wasm / wasm-threads | onnxruntime-web-2t / wasm-threads | wasm heap MB |');
  out('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of Object.keys(SHAPES)) {
    const w = got('wasm', s, false);
    if (!w) continue;
    const ratio = (e, base = w) => {
      const r = got(e, s, false);
      return r && base ? `${(r.ms / base.ms).toFixed(2)}×` : '';
    };
    const t = got('wasm-threads', s, false);
    out(`| ${s} | ${ratio('onnxruntime-web')} | ${ratio('tfjs-wasm')} | ${ratio('js')} | ${peak ? `${((100 * w.gflops) / peak.gflops).toFixed(0)}%` : ''} | ${t ? `${(w.ms / t.ms).toFixed(2)}×` : ''} | ${t ? ratio('onnxruntime-web-2t', t) : ''} | ${w.peak_heap_mb?.toFixed(1) ?? ''} |`);
  }
  if (report.goals?.length) {
    out();
    out('| goal | measured | met |');
    out('|---|---:|:---:|');
    for (const g of report.goals) {
      const v = g.value == null ? 'not measured' : g.goal.includes('µs') ? `${g.value.toFixed(1)} µs` : g.goal.includes('MB') ? `${g.value.toFixed(1)} MB` : g.goal.includes('%') ? `${(100 * g.value).toFixed(0)}%` : `${g.value.toFixed(2)}×`;
      out(`| ${g.goal} | ${v} | ${g.met == null ? '—' : g.met ? 'yes' : 'no'} |`);
    }
    out();
    out(`This run met ${report.goals.filter((g) => g.met).length} of ${report.goals.length} goals.`);
  }
  if (report.skipped?.length) {
    out();
    out(`Skipped: ${report.skipped.map((k) => `${k.engine}${k.shape ? ` (${k.shape})` : ''}: ${k.reason}`).join('; ')}.`);
  }
  return lines.join('\n');
}

/**
 * The Markdown of a report's model section (GPT-2 end to end): the command, the table of ms
 * per forward with GFLOP/s, the ratios to this project's core and the cross-check; null when
 * the report has no model results.
 */
export function modelMarkdown(report) {
  const results = report?.model ?? [];
  if (results.length === 0) return null;
  const lines = [];
  const out = (line = '') => lines.push(line);
  const command = (report.command ?? 'npm run bench').replace(/ --$/, '');
  out(`\`${command}\` on ${report.machine ?? 'an unnamed machine'}${report.load_average ? `; 1-minute load average ${report.load_average.start} at the start, ${report.load_average.end} at the end` : ''}.`);
  out('Cells: the median ms per forward of each engine\'s fastest round (GFLOP/s: per layer 2·T·(4E² + 2·E·I) + 4·T²·E, and 2·T·E·V for the LM head); in brackets the engine\'s time over ours on as many threads, `wasm`\'s (one thread) or, for `onnxruntime-web-2t`, `wasm-threads`\' (two): > 1, ours is faster.');
  out();
  const cols = MODEL_ENGINES.filter((e) => results.some((r) => r.engine === e));
  out(`| model | tokens | ${cols.join(' | ')} |`);
  out(`|---|---:|${cols.map(() => '---:').join('|')}|`);
  for (const name of new Set(results.map((r) => r.case))) {
    const row = results.filter((r) => r.case === name);
    const cells = cols.map((e) => {
      const r = row.find((x) => x.engine === e);
      if (!r) return '';
      const ours = row.find((x) => x.engine === modelBaseline(e));
      return `${ms(r.ms)} (${r.gflops.toFixed(1)})${e !== 'wasm' && ours ? ` [${(r.ms / ours.ms).toFixed(2)}×]` : ''}`;
    });
    out(`| ${name} | ${row[0].tokens} | ${cells.join(' | ')} |`);
  }
  const errs = results.filter((r) => r.max_err != null);
  if (errs.length) {
    const worst = (key) => Math.max(...errs.map((r) => r[key] ?? 0)).toExponential(1);
    out();
    out(`Every engine's logits agreed with \`wasm\`'s to at most ${worst('max_err')}, its attention weights to ${worst('max_err_attention')} (tolerance 1e-4 each).`);
  }
  const heaps = results.filter((r) => r.engine.startsWith('wasm') && r.peak_heap_mb != null);
  if (heaps.length) {
    out();
    out(`Our modules' memory after the runs: ${heaps.map((r) => `${r.engine} ${r.case} ${r.peak_heap_mb.toFixed(0)} MB`).join(', ')}.`);
  }
  return lines.join('\n');
}

/** `doc` with the text between its `begin` and `end` lines (BEGIN and END by default) replaced by `tables`. */
export function replaceTables(doc, tables, docName = 'the page', begin_ = BEGIN, end_ = END) {
  const begin = doc.indexOf(begin_);
  const end = doc.indexOf(end_);
  if (begin < 0 || end < begin) {
    throw new Error(`${docName}: expected the marker lines\n  ${begin_}\n  ${end_}\n(in that order) around the tables, found ${begin < 0 ? 'no begin marker' : 'the end marker before the begin marker or no end marker'}`);
  }
  return `${doc.slice(0, begin + begin_.length)}\n${tables}\n${doc.slice(end)}`;
}

function main(argv) {
  let reportFile = path.join(repoRoot, 'build/bench/last.json');
  let docFile = path.join(repoRoot, 'docs/performance.md');
  let toStdout = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--stdout') toStdout = true;
    else if (a === '--doc') {
      if (i + 1 >= argv.length) throw new Error('--doc needs a file');
      docFile = path.resolve(argv[++i]);
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}; usage: node bench/markdown.js [REPORT.json] [--doc FILE | --stdout]`);
    else reportFile = path.resolve(a);
  }
  if (!fs.existsSync(reportFile)) {
    throw new Error(`${path.relative(process.cwd(), reportFile)} does not exist: run \`npm run bench\` first (a full run writes build/bench/last.json), or name a report`);
  }
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  const model = modelMarkdown(report);
  // a report of the model section alone (--model-only) leaves the attention tables as they are
  const tables = model && Array.isArray(report.results) && report.results.length === 0 ? null : reportMarkdown(report);
  if (toStdout) {
    console.log([tables, model].filter(Boolean).join('\n\n'));
    return;
  }
  const docName = path.relative(process.cwd(), docFile);
  let doc = fs.readFileSync(docFile, 'utf8');
  if (tables) doc = replaceTables(doc, tables, docName);
  if (model) doc = replaceTables(doc, model, docName, MODEL_BEGIN, MODEL_END);
  fs.writeFileSync(docFile, doc);
  console.log(`[bench] wrote the tables of ${path.relative(process.cwd(), reportFile)} into ${path.relative(process.cwd(), docFile)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(`[bench] ${error.message}`);
    process.exitCode = 1;
  }
}
