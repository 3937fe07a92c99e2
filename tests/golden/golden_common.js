// The one comparator of the golden cases, for every engine (tests/golden/README.md, "What
// passes"): finding case files, reading them, comparing an engine's result with the expected
// values, the per-case record and its one-line report, and the main of a runner. Each engine's
// runner only computes: golden_wasm.js through the JS API, golden_native.js through
// build/<preset>/mha_golden (golden_native.cpp), which reads calls and writes results.
import fs from 'node:fs';
import path from 'node:path';

/** Case files named by the arguments: a directory gives its *.json files, sorted. */
export function collectCaseFiles(args) {
  const files = [];
  for (const arg of args) {
    let stat = null;
    try {
      stat = fs.statSync(arg);
    } catch {
      // a missing path is kept: it fails as a case, with its reason
    }
    if (stat && stat.isDirectory()) {
      const found = fs.readdirSync(arg).filter((f) => f.endsWith('.json')).sort();
      for (const f of found) {
        if (fs.statSync(path.join(arg, f)).isFile()) files.push(path.join(arg, f));
      }
    } else {
      files.push(arg);
    }
  }
  return files;
}

/** Python's json writes NaN / Infinity / -Infinity as bare tokens: quote them outside strings. */
export function quoteNonFiniteTokens(text) {
  let out = '';
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      continue;
    }
    for (const token of ['-Infinity', 'Infinity', 'NaN']) {
      if (text.startsWith(token, i)) {
        out += `${text.slice(start, i)}"${token}"`;
        i += token.length - 1;
        start = i + 1;
        break;
      }
    }
  }
  return out + text.slice(start);
}

export class CaseError extends Error {}

export function parseCaseText(text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    try {
      return JSON.parse(quoteNonFiniteTokens(text));
    } catch {
      throw new CaseError(`not valid JSON: ${error.message}`);
    }
  }
}

export function readCase(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CaseError(`cannot read ${file}: ${error.message}`);
  }
  const c = parseCaseText(text);
  if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new CaseError('a case file must hold one JSON object');
  for (const key of ['config', 'state_dict', 'inputs', 'expected']) {
    if (!c[key] || typeof c[key] !== 'object') throw new CaseError(`"${key}" object is missing`);
  }
  return c;
}

function elementToNumber(v, where) {
  if (v === null) return NaN;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    if (v === 'NaN' || v === 'nan') return NaN;
    if (v === 'Infinity' || v === 'inf') return Infinity;
    if (v === '-Infinity' || v === '-inf') return -Infinity;
  }
  throw new CaseError(`${where}: expected a number, null, "NaN" or "Infinity" in data, got ${JSON.stringify(v)}`);
}

/**
 * A tensor of a case file as { shape, dtype: 'float32' | 'bool', data: Float32Array | Uint8Array },
 * or null when absent. Checks that data holds as many values as the shape says.
 */
export function readTensor(parent, key, where, required) {
  const t = parent?.[key];
  const name = `${where}.${key}`;
  if (t === undefined || t === null) {
    if (required) throw new CaseError(`${name} is missing`);
    return null;
  }
  if (typeof t !== 'object' || !Array.isArray(t.shape) || !Array.isArray(t.data)) {
    throw new CaseError(`${name}: expected {"shape", "dtype", "data"}`);
  }
  const dtype = t.dtype ?? 'float32';
  const isBool = dtype === 'bool';
  if (!isBool && !['float32', 'float64', 'float'].includes(dtype)) {
    throw new CaseError(`${name}: dtype must be "float32" or "bool", got "${dtype}"`);
  }
  // Row-major data; nested lists (as tensor.tolist() gives them) are flattened.
  const values = t.data.some(Array.isArray) ? t.data.flat(Infinity) : t.data;
  const size = t.shape.reduce((a, b) => a * Math.max(b, 0), 1);
  if (size !== values.length) {
    throw new CaseError(`${name}: shape [${t.shape.join(', ')}] holds ${size} values but data has ${values.length}`);
  }
  const data = isBool ? new Uint8Array(size) : new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const v = elementToNumber(values[i], name);
    data[i] = isBool ? (v !== 0 ? 1 : 0) : v;
  }
  return { shape: t.shape.slice(), dtype: isBool ? 'bool' : 'float32', data };
}

/** The tolerances a case asks for; weights default to min(atol, 1e-5) absolute. */
export function tolerances(c) {
  const t = c.tolerance && typeof c.tolerance === 'object' ? c.tolerance : {};
  const num = (v, fallback) => (typeof v === 'number' ? v : fallback);
  const atol = num(t.atol, 1e-4);
  return {
    atol,
    rtol: num(t.rtol, 0),
    weightsAtol: num(t.weights_atol, Math.min(atol, 1e-5)),
    weightsRtol: num(t.weights_rtol, 0),
  };
}

function sameShape(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Compares actual ({ data, shape }) with expected: the largest absolute error, and whether every
 * element is within atol + rtol·|expected| (NaN must match NaN, ±Infinity must be equal).
 */
export function compareTensor(what, actual, expected, atol, rtol) {
  const result = { compared: true, pass: true, maxAbsErr: 0, atol, rtol, message: '' };
  if (!sameShape(actual.shape, expected.shape)) {
    return { ...result, pass: false, maxAbsErr: Infinity, message: `${what} shape [${actual.shape.join(', ')}], expected [${expected.shape.join(', ')}]` };
  }
  if (actual.data.length !== expected.data.length) {
    return { ...result, pass: false, maxAbsErr: Infinity, message: `${what} has ${actual.data.length} values, expected ${expected.data.length}` };
  }
  let bad = 0;
  let firstBad = '';
  for (let i = 0; i < actual.data.length; i++) {
    const a = actual.data[i];
    const e = expected.data[i];
    let ok;
    let err;
    if (Number.isNaN(a) || Number.isNaN(e)) {
      ok = Number.isNaN(a) && Number.isNaN(e);
      err = ok ? 0 : Infinity;
    } else if (!Number.isFinite(a) || !Number.isFinite(e)) {
      ok = a === e;
      err = ok ? 0 : Infinity;
    } else {
      err = Math.abs(a - e);
      ok = err <= atol + rtol * Math.abs(e);
    }
    if (err > result.maxAbsErr) result.maxAbsErr = err;
    if (!ok) {
      if (bad === 0) firstBad = `${what}[${i}] = ${a}, expected ${e}`;
      bad++;
    }
  }
  if (bad > 0) {
    result.pass = false;
    result.message = `${bad} of ${actual.data.length} ${what} values out of tolerance; first: ${firstBad}`;
  }
  return result;
}

/** 3.1e-07, as C's %.1e prints it. */
export function sci(v) {
  if (v === null || v === undefined) return '-';
  if (!Number.isFinite(v)) return 'inf';
  const [mantissa, exponent] = v.toExponential(1).split('e');
  const sign = exponent[0] === '-' ? '-' : '+';
  return `${mantissa}e${sign}${exponent.replace(/^[+-]/, '').padStart(2, '0')}`;
}

/** A tolerance: 1e-04, or 2.5e-05 when it needs the digit. */
export function tolText(atol, rtol) {
  const short = (v) => {
    const s = sci(v);
    return s.replace(/\.0e/, 'e');
  };
  return `tol ${short(atol)}${rtol > 0 ? `+${short(rtol)}|e|` : ''}`;
}

/**
 * One result line: PASS native  name  out 3.1e-07 (tol 1e-04)  w 2.2e-08 (tol 1e-05).
 * r is a per-case JSON record of a runner (*_compared false: not compared; an error of null
 * when compared: infinite, e.g. NaN where a number was expected).
 */
export function formatResult(r) {
  let line = `${r.pass ? 'PASS' : 'FAIL'} ${r.engine.padEnd(6)}  ${r.name}`;
  if (r.output_compared) {
    line += `  out ${r.output_max_abs_err === null ? 'inf' : sci(r.output_max_abs_err)} (${tolText(r.output_atol, r.output_rtol)})`;
  }
  if (r.weights_compared) {
    line += `  w ${r.weights_max_abs_err === null ? 'inf' : sci(r.weights_max_abs_err)} (${tolText(r.weights_atol, r.weights_rtol)})`;
  }
  if (r.message) line += `  -- ${r.message}`;
  return line;
}

/** A case's config as the JS API's constructor takes it (seed 0). */
export function apiConfig(cfg) {
  const config = {
    embedDim: cfg.embed_dim, numHeads: cfg.num_heads, numKvHeads: cfg.num_kv_heads, kdim: cfg.kdim, vdim: cfg.vdim,
    bias: cfg.bias, addBiasKv: cfg.add_bias_kv, addZeroAttn: cfg.add_zero_attn, batchFirst: cfg.batch_first, seed: 0,
  };
  for (const key of Object.keys(config)) if (config[key] === null || config[key] === undefined) delete config[key];
  return config;
}

/**
 * A case file read for the engines: name, tolerances, config (as the file writes it), the
 * state_dict's tensors ([name, tensor], null entries left out), the inputs (key and value
 * default to the query and key tensors themselves: self-attention), the options with their
 * defaults, and the expected output and weights. Throws a CaseError for a file that is not a case.
 */
export function loadGoldenCase(file) {
  const c = readCase(file);
  const query = readTensor(c.inputs, 'query', 'inputs', true);
  const key = readTensor(c.inputs, 'key', 'inputs', false) ?? query;
  const options = c.options && typeof c.options === 'object' ? c.options : {};
  const flag = (v, fallback) => (typeof v === 'boolean' ? v : fallback);
  return {
    name: typeof c.name === 'string' ? c.name : path.basename(file, '.json'),
    tolerance: tolerances(c),
    config: c.config,
    stateDict: Object.keys(c.state_dict).filter((n) => c.state_dict[n] !== null).map((n) => [n, readTensor(c.state_dict, n, 'state_dict', true)]),
    inputs: {
      query,
      key,
      value: readTensor(c.inputs, 'value', 'inputs', false) ?? key,
      keyPaddingMask: readTensor(c.inputs, 'key_padding_mask', 'inputs', false),
      attnMask: readTensor(c.inputs, 'attn_mask', 'inputs', false),
    },
    options: {
      needWeights: flag(options.need_weights, true),
      averageAttnWeights: flag(options.average_attn_weights, true),
      isCausal: flag(options.is_causal, false),
    },
    expected: { output: readTensor(c.expected, 'output', 'expected', true), weights: readTensor(c.expected, 'weights', 'expected', false) },
  };
}

/**
 * The record of one case on one engine (what --json prints, a line each). `loaded` is
 * loadGoldenCase's case or the CaseError it threw; `outcome` the engine's { output, weights }
 * (weights null when none came back) or the Error that stopped it (its message is the case's).
 */
export function judgeCase(engine, file, loaded, outcome) {
  const record = {
    engine, name: path.basename(file, '.json'), file, pass: false,
    output_compared: false, output_max_abs_err: null, output_atol: null, output_rtol: null,
    weights_compared: false, weights_max_abs_err: null, weights_atol: null, weights_rtol: null,
    message: '',
  };
  if (loaded instanceof Error) return { ...record, message: loaded.message };
  const tol = loaded.tolerance;
  Object.assign(record, {
    name: loaded.name, output_atol: tol.atol, output_rtol: tol.rtol, weights_atol: tol.weightsAtol, weights_rtol: tol.weightsRtol,
  });
  if (outcome instanceof Error) return { ...record, message: outcome.message };
  const { expected } = loaded;
  const output = compareTensor('output', outcome.output, expected.output, tol.atol, tol.rtol);
  let weights = { compared: false, pass: true, maxAbsErr: 0, message: '' };
  if (expected.weights !== null) {
    weights = outcome.weights
      ? compareTensor('weights', outcome.weights, expected.weights, tol.weightsAtol, tol.weightsRtol)
      : { compared: true, pass: false, maxAbsErr: Infinity, message: 'weights expected but none returned' };
  } else if (outcome.weights) {
    weights = {
      compared: true, pass: false, maxAbsErr: Infinity,
      message: `weights returned with shape [${outcome.weights.shape.join(', ')}] but the case expects none (need_weights false)`,
    };
  }
  const finite = (v) => (Number.isFinite(v) ? v : null);
  return {
    ...record,
    pass: output.pass && weights.pass,
    output_compared: true,
    output_max_abs_err: finite(output.maxAbsErr),
    weights_compared: weights.compared,
    weights_max_abs_err: weights.compared ? finite(weights.maxAbsErr) : null,
    message: [output.message, weights.message].filter(Boolean).join('; '),
  };
}

/**
 * A runner's main: `node RUNNER [--json] [--OPTION VALUE ...] DIR|FILE...`. Each case file is
 * read once; `start(options)` gives the engines ({ engine, run(loaded) }, where run maps the
 * loaded cases, CaseErrors among them, to outcomes), or throws an Error saying what could not
 * start. Prints one line (or --json record) per case and engine, case by case, then
 * "N passed, N failed" (or {"summary": {"passed", "failed"}}). Returns the exit status: 1 if a
 * case failed or an engine did not start, 2 on bad usage.
 */
export async function goldenMain(argv, { name, valueOptions = [], start }) {
  const usage = `usage: node tests/golden/${name}.js [--json]${valueOptions.map((o) => ` [${o} VALUE]`).join('')} DIR|FILE...`;
  if (argv.includes('-h') || argv.includes('--help')) {
    console.log(usage);
    return 0;
  }
  const options = {};
  const targets = [];
  let asJson = false;
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--json') asJson = true;
    else if (valueOptions.includes(arg) && i + 1 < argv.length) options[arg.slice(2)] = argv[++i];
    else if (arg.startsWith('-')) {
      console.error(`${name}: unknown option ${arg}\n${usage}`);
      return 2;
    } else targets.push(arg);
  }
  const files = collectCaseFiles(targets);
  if (files.length === 0) {
    console.error(`${name}: no case files (*.json) in ${targets.join(', ') || 'the arguments'} (${usage})`);
    return 2;
  }
  let engines;
  try {
    engines = await start(options);
  } catch (error) {
    console.error(`${name}: ${error.message}`);
    return 1;
  }
  const loaded = files.map((file) => {
    try {
      return loadGoldenCase(file);
    } catch (error) {
      if (error instanceof CaseError) return error;
      throw error;
    }
  });
  const outcomes = [];
  for (const engine of engines) outcomes.push(await engine.run(loaded));
  let passed = 0;
  let failed = 0;
  files.forEach((file, i) => {
    engines.forEach((engine, e) => {
      const record = judgeCase(engine.engine, file, loaded[i], outcomes[e][i]);
      if (record.pass) passed++;
      else failed++;
      console.log(asJson ? JSON.stringify(record) : formatResult(record));
    });
  });
  console.log(asJson ? JSON.stringify({ summary: { passed, failed } }) : `${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}
