// `native-sse2` and `native-march`: this project's C++ core built natively (-O3 -msse2, the
// width of WASM SIMD; and -O3 -march=native), timed by bench/native/mha_bench.cpp with a plain
// steady_clock timer. The executable reads the same weight and input files, writes its output
// for the cross-check and prints one JSON line.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../data.js';

/** Where each native engine's executable is (see run.js: buildNative). */
export const NATIVE_BUILDS = {
  'native-sse2': { dir: 'build/bench-sse2', arch: 'sse2', fallback: 'build/native' },
  'native-march': { dir: 'build/bench-march', arch: 'native' },
};

export function executable(engine) {
  const b = NATIVE_BUILDS[engine];
  for (const dir of [b.dir, b.fallback].filter(Boolean)) {
    const exe = path.join(repoRoot, dir, 'mha_bench');
    if (fs.existsSync(exe)) return exe;
  }
  return null;
}

export function available(engine) {
  return executable(engine) ? true : `${NATIVE_BUILDS[engine].dir}/mha_bench is not built`;
}

/** Runs the executable; returns {ms, runs, output}. */
export function runNative(engine, { L, E, H }, files, { needWeights, budgetMs, outFile }) {
  const args = [
    '--weights', files.weightsFile, '--input', files.inputFile, '--L', L, '--E', E, '--H', H,
    '--need-weights', needWeights ? 1 : 0, '--budget-ms', budgetMs, '--output', outFile,
  ].map(String);
  const r = spawnSync(executable(engine), args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${engine} failed: ${r.stderr || r.stdout || r.error}`);
  const line = r.stdout.trim().split('\n').pop();
  return JSON.parse(line);
}
