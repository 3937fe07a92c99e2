// `wasm-threads`: the pthreads core of this project (2 threads), as `loadMha({ threads: true })`
// gives it (what `loadMha()` picks in Node.js and in crossOriginIsolated pages), timed through
// the same public JS API as `wasm`.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../data.js';
import { create as createWasm } from './wasm.js';

const FILES = ['mha_core_threads.js', 'mha_core_threads.worker.js', 'mha_core_threads.wasm'];

export function available() {
  const dir = path.join(repoRoot, 'web/lib/wasm/threads');
  const missing = FILES.filter((f) => !fs.existsSync(path.join(dir, f)));
  return missing.length ? `web/lib/wasm/threads/${missing[0]} is not built (npm run build)` : true;
}

export async function create(shape, weights, options) {
  return createWasm(shape, weights, { ...options, pthreads: true });
}
