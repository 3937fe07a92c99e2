// Runs golden case files (tests/golden/README.md) through both WebAssembly cores, the
// single-thread module and the pthreads module, by way of the JS API users import
// (web/lib/index.js, loadMha), in Node.js.
//
//   node tests/golden/golden_wasm.js [--json] DIR|FILE...
//
// One line per case and core (engines wasm, wasm-threads) with the largest errors beside the
// tolerances, then "N passed, N failed" (one count per case and core); exit status 1 if any
// failed or a core did not load, 2 on bad usage (no case files among them). --json prints one
// JSON object per case, core and line (the records golden_native.cpp prints), then
// {"summary": {"passed", "failed"}}.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CaseError, collectCaseFiles, compareTensor, formatResult, readCase, readTensor, tolerances,
} from './golden_common.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function configOf(cfg) {
  const pick = (v) => (v === null || v === undefined ? undefined : v);
  const config = {
    embedDim: cfg.embed_dim,
    numHeads: cfg.num_heads,
    numKvHeads: pick(cfg.num_kv_heads),
    kdim: pick(cfg.kdim),
    vdim: pick(cfg.vdim),
    bias: pick(cfg.bias),
    addBiasKv: pick(cfg.add_bias_kv),
    addZeroAttn: pick(cfg.add_zero_attn),
    batchFirst: pick(cfg.batch_first),
    seed: 0,
  };
  for (const key of Object.keys(config)) if (config[key] === undefined) delete config[key];
  return config;
}

const asInput = (t) => (t === null ? null : { data: t.data, shape: t.shape, dtype: t.dtype });

/** Runs one case file; returns the per-case record (as golden_native.cpp's --json prints it). */
export function runCase(mha, file) {
  const record = {
    engine: mha.threads > 1 ? 'wasm-threads' : 'wasm',
    name: path.basename(file, '.json'),
    file,
    pass: false,
    output_compared: false,
    output_max_abs_err: null,
    output_atol: null,
    output_rtol: null,
    weights_compared: false,
    weights_max_abs_err: null,
    weights_atol: null,
    weights_rtol: null,
    message: '',
  };
  let attention = null;
  try {
    const c = readCase(file);
    if (typeof c.name === 'string') record.name = c.name;
    const tol = tolerances(c);
    record.output_atol = tol.atol;
    record.output_rtol = tol.rtol;
    record.weights_atol = tol.weightsAtol;
    record.weights_rtol = tol.weightsRtol;

    const stage = (what, fn) => {
      try {
        return fn();
      } catch (error) {
        if (error instanceof CaseError) throw error;
        throw new CaseError(`${what}: ${error.code ? `[${error.code}] ` : ''}${error.message}`);
      }
    };
    attention = stage('constructor', () => new mha.MultiHeadAttention(configOf(c.config)));
    for (const name of Object.keys(c.state_dict)) {
      if (c.state_dict[name] === null) continue; // e.g. in_proj_weight None when q/k/v are separate
      const t = readTensor(c.state_dict, name, 'state_dict', true);
      stage(`setParameter("${name}")`, () => attention.setParameter(name, asInput(t)));
    }
    const query = readTensor(c.inputs, 'query', 'inputs', true);
    const key = readTensor(c.inputs, 'key', 'inputs', false) ?? query;
    const value = readTensor(c.inputs, 'value', 'inputs', false) ?? key;
    const keyPaddingMask = readTensor(c.inputs, 'key_padding_mask', 'inputs', false);
    const attnMask = readTensor(c.inputs, 'attn_mask', 'inputs', false);
    const options = c.options && typeof c.options === 'object' ? c.options : {};
    const flag = (v, fallback) => (typeof v === 'boolean' ? v : fallback);
    const result = stage('forward', () => attention.forward({
      query: asInput(query),
      key: asInput(key),
      value: asInput(value),
      keyPaddingMask: asInput(keyPaddingMask),
      attnMask: asInput(attnMask),
      needWeights: flag(options.need_weights, true),
      averageAttnWeights: flag(options.average_attn_weights, true),
      isCausal: flag(options.is_causal, false),
    }));

    const expectedOutput = readTensor(c.expected, 'output', 'expected', true);
    const expectedWeights = readTensor(c.expected, 'weights', 'expected', false);
    const output = compareTensor('output', result.output, expectedOutput, tol.atol, tol.rtol);
    let weights = { compared: false, pass: true, maxAbsErr: 0, message: '' };
    if (expectedWeights !== null) {
      weights = result.weights
        ? compareTensor('weights', result.weights, expectedWeights, tol.weightsAtol, tol.weightsRtol)
        : { compared: true, pass: false, maxAbsErr: Infinity, message: 'weights expected but none returned' };
    } else if (result.weights) {
      weights = {
        compared: true, pass: false, maxAbsErr: Infinity,
        message: `weights returned with shape [${result.weights.shape.join(', ')}] but the case expects none (need_weights false)`,
      };
    }
    const finite = (v) => (Number.isFinite(v) ? v : null);
    record.output_compared = true;
    record.output_max_abs_err = finite(output.maxAbsErr);
    record.weights_compared = weights.compared;
    record.weights_max_abs_err = weights.compared ? finite(weights.maxAbsErr) : null;
    record.pass = output.pass && weights.pass;
    record.message = [output.message, weights.message].filter(Boolean).join('; ');
  } catch (error) {
    record.pass = false;
    record.message = error instanceof CaseError ? error.message : `${error.name}: ${error.message}`;
  } finally {
    if (attention) attention.dispose();
  }
  return record;
}

/**
 * Loads the module the way users do, `loadMha()` from web/lib/index.js: the single-thread core,
 * or the pthreads core (`threads`), each asked for by name so that both are checked.
 */
export async function loadModule({ threads = false } = {}) {
  const indexUrl = pathToFileURL(path.join(repoRoot, 'web/lib/index.js'));
  const { loadMha } = await import(indexUrl.href);
  const mha = await loadMha({ threads });
  if (mha.threads !== (threads ? 2 : 1)) throw new Error(`asked for ${threads ? 'the pthreads' : 'the single-thread'} core, got ${mha.threads} thread(s)`);
  return mha;
}

async function main(argv) {
  const asJson = argv.includes('--json');
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--json');
  const usage = 'usage: node tests/golden/golden_wasm.js [--json] DIR|FILE...';
  if (argv.includes('-h') || argv.includes('--help')) {
    console.log(usage);
    return 0;
  }
  if (unknown.length > 0) {
    console.error(`golden_wasm: unknown option ${unknown.join(' ')}\n${usage}`);
    return 2;
  }
  const targets = argv.filter((a) => !a.startsWith('-'));
  const files = collectCaseFiles(targets);
  if (files.length === 0) {
    console.error(`golden_wasm: no case files (*.json) in ${targets.join(', ') || 'the arguments'} (${usage})`);
    return 2;
  }
  const cores = [];
  for (const threads of [false, true]) {
    try {
      cores.push(await loadModule({ threads }));
    } catch (error) {
      console.error(`golden_wasm: cannot load the ${threads ? 'pthreads' : 'single-thread'} WebAssembly core through ` +
        `web/lib/index.js: ${error.message}\nBuild it with: npm run build -- wasm`);
      return 1;
    }
  }
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    for (const mha of cores) {
      const record = runCase(mha, file);
      if (record.pass) passed++;
      else failed++;
      console.log(asJson ? JSON.stringify(record) : formatResult(record));
    }
  }
  console.log(asJson ? JSON.stringify({ summary: { passed, failed } }) : `${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}
