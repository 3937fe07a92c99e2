// The weights and input every engine gets, generated deterministically (a seeded xorshift, so
// no engine and no run depends on Math.random) and written to build/bench/ as raw float32 files
// for the engines that run in other processes (native, the ONNX export).
//
// Weights depend only on (E, H), so shapes B, D and E share them (and one ONNX model).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const benchDir = path.join(repoRoot, 'build/bench');

function xorshift(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

function uniform(n, bound, rand) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rand() * 2 - 1) * bound;
  return out;
}

/**
 * The parameters of nn.MultiheadAttention(E, H, batch_first=True), initialised with the
 * scales PyTorch uses (xavier-uniform in-projection, 1/sqrt(E) out-projection) and small
 * non-zero biases so that the biases are exercised.
 */
export function makeWeights(E, H) {
  const rand = xorshift(1000 + E * 31 + H);
  return {
    in_proj_weight: uniform(3 * E * E, Math.sqrt(6 / (E + 3 * E)), rand),
    in_proj_bias: uniform(3 * E, 0.02, rand),
    'out_proj.weight': uniform(E * E, 1 / Math.sqrt(E), rand),
    'out_proj.bias': uniform(E, 0.02, rand),
  };
}

/** The input x (1, L, E), uniform in [-1, 1). */
export function makeInput(L, E) {
  return uniform(L * E, 1, xorshift(7 + L * 131 + E));
}

export const PARAM_ORDER = ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'];

/** Writes the weights (in PARAM_ORDER) and input of a shape to build/bench/; returns the paths. */
export function writeShapeFiles(name, { L, E, H }) {
  fs.mkdirSync(benchDir, { recursive: true });
  const weightsFile = path.join(benchDir, `weights_E${E}_H${H}.f32`);
  const inputFile = path.join(benchDir, `input_${name}_L${L}_E${E}.f32`);
  if (!fs.existsSync(weightsFile)) {
    const w = makeWeights(E, H);
    const buffers = PARAM_ORDER.map((k) => Buffer.from(w[k].buffer, w[k].byteOffset, w[k].byteLength));
    fs.writeFileSync(weightsFile, Buffer.concat(buffers));
  }
  if (!fs.existsSync(inputFile)) {
    const x = makeInput(L, E);
    fs.writeFileSync(inputFile, Buffer.from(x.buffer));
  }
  return { weightsFile, inputFile };
}

/** Reads a raw float32 file. */
export function readF32(file) {
  const buf = fs.readFileSync(file);
  return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4).slice();
}

/** The largest |a - b|, and whether either has a non-finite value where the other does not. */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/**
 * One timing job in a Node.js process of its own (`script` under bench/, the job as JSON in
 * argv): the last line it prints, parsed; { error } when it prints none.
 * @param {string} script  e.g. 'model/worker.js'
 * @param {object} job
 */
export function runJob(script, job) {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bench', script), JSON.stringify(job)], {
    encoding: 'utf8', cwd: repoRoot, maxBuffer: 1 << 26, timeout: 900_000,
  });
  const line = (r.stdout || '').trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: `worker exited with ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}` };
  }
}

/** Float32Arrays one after another, as one. @param {ArrayLike<number>[]} parts */
export function concat(parts) {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
