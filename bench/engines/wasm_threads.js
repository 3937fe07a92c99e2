// `wasm-threads`: the pthreads build of this project's module (2 threads; CMake option
// MHA_WASM_THREADS, built by `npm run bench` into build/bench-wasm-threads), timed through the
// same public JS API as `wasm`. The API's loader imports ./wasm/mha_core.js; here it gets a
// copy of web/lib whose wasm/mha_core.js hands over the threaded module instead (loaded with
// require, as a classic script, because its worker threads load the same file).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDir, repoRoot } from '../data.js';
import { create as createWasm } from './wasm.js';

const BUILD = path.join(repoRoot, 'build/bench-wasm-threads');
const FILES = ['mha_core_threads.js', 'mha_core_threads.worker.js', 'mha_core_threads.wasm'];
const LIB = path.join(benchDir, 'wasm-threads-lib');

export function available() {
  const missing = FILES.filter((f) => !fs.existsSync(path.join(BUILD, f)));
  if (missing.length) return `build/bench-wasm-threads/${missing[0]} is not built (made on a full run)`;
  return true;
}

/** Lays out build/bench/wasm-threads-lib: web/lib with the threaded module behind its loader. */
export function prepareLib() {
  fs.rmSync(LIB, { recursive: true, force: true });
  const builtWasm = path.join(repoRoot, 'web/lib/wasm');
  fs.cpSync(path.join(repoRoot, 'web/lib'), LIB, { recursive: true, filter: (src) => !src.startsWith(builtWasm) });
  const threads = path.join(LIB, 'wasm', 'threads');
  fs.mkdirSync(threads, { recursive: true });
  for (const f of FILES) fs.copyFileSync(path.join(BUILD, f), path.join(threads, f));
  fs.writeFileSync(path.join(threads, 'package.json'), '{ "type": "commonjs" }\n');
  fs.copyFileSync(path.join(BUILD, 'mha_core_threads.wasm'), path.join(LIB, 'wasm', 'mha_core.wasm'));
  fs.writeFileSync(path.join(LIB, 'wasm', 'mha_core.js'), [
    '// The pthreads build, loaded with require (a classic script: its workers load it too).',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    "export default require('./threads/mha_core_threads.js');",
    '',
  ].join('\n'));
}

export async function create(shape, weights, options) {
  const index = path.join(LIB, 'index.js');
  if (!fs.existsSync(index)) throw new Error('build/bench/wasm-threads-lib is not prepared (bench/run.js does it)');
  return createWasm(shape, weights, { ...options, libUrl: pathToFileURL(index).href });
}
