// What the JS golden runners share: finding case files, reading them, comparing a result with
// the expected values, and the one-line report. tests/golden/golden_native.cpp implements the
// same rules in C++ (see tests/golden/README.md, "What passes").
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
