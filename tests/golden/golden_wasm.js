// Runs golden case files (tests/golden/README.md) through both WebAssembly cores, the
// single-thread module and the pthreads module, by way of the JS API users import
// (web/lib/index.js, loadMha), in Node.js; golden_common.js compares and reports.
//
//   node tests/golden/golden_wasm.js [--json] DIR|FILE...
//
// One line per case and core (engines wasm, wasm-threads) with the largest errors beside the
// tolerances, then "N passed, N failed" (one count per case and core); exit status 1 if any
// failed or a core did not load, 2 on bad usage (no case files among them). --json prints one
// JSON object per case, core and line (golden_common.js's judgeCase records), then
// {"summary": {"passed", "failed"}}.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { apiConfig, goldenMain } from './golden_common.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const asInput = (t) => (t === null ? null : { data: t.data, shape: t.shape, dtype: t.dtype });

/** One loaded case on a module: { output, weights }, or the Error that stopped it, naming the step. */
export function runCase(mha, loaded) {
  if (loaded instanceof Error) return loaded;
  const stage = (what, fn) => {
    try {
      return fn();
    } catch (error) {
      throw new Error(`${what}: ${error.code ? `[${error.code}] ` : ''}${error.message}`);
    }
  };
  let attention = null;
  try {
    attention = stage('constructor', () => new mha.MultiHeadAttention(apiConfig(loaded.config)));
    for (const [name, t] of loaded.stateDict) stage(`setParameter("${name}")`, () => attention.setParameter(name, asInput(t)));
    const { query, key, value, keyPaddingMask, attnMask } = loaded.inputs;
    const result = stage('forward', () => attention.forward({
      query: asInput(query), key: asInput(key), value: asInput(value),
      keyPaddingMask: asInput(keyPaddingMask), attnMask: asInput(attnMask), ...loaded.options,
    }));
    return { output: result.output, weights: result.weights };
  } catch (error) {
    return error;
  } finally {
    if (attention) attention.dispose();
  }
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

async function start() {
  const engines = [];
  for (const threads of [false, true]) {
    let mha;
    try {
      mha = await loadModule({ threads });
    } catch (error) {
      throw new Error(`cannot load the ${threads ? 'pthreads' : 'single-thread'} WebAssembly core through ` +
        `web/lib/index.js: ${error.message}\nBuild it with: npm run build -- wasm`);
    }
    engines.push({ engine: threads ? 'wasm-threads' : 'wasm', run: (loaded) => loaded.map((c) => runCase(mha, c)) });
  }
  return engines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await goldenMain(process.argv.slice(2), { name: 'golden_wasm', start });
}
