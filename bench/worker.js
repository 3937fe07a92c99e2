// One timing job of `npm run bench`, in a process of its own (so every engine starts with a
// fresh WebAssembly heap and its own thread settings):
//   node bench/worker.js '{"engine":"wasm","shape":"B","needWeights":false,"budgetMs":1500,
//                          "refFile":"build/bench/ref_B.f32" | null, "writeRef": false}'
// It checks the engine's output against the reference file (max |diff| <= 1e-3) before timing,
// or writes the reference when asked. Then warm-up and timed runs (bench/timing.js: the median
// of at least 5 after warm-up; 3 when one forward takes over 2 s). Prints one JSON line:
//   {"ms": median, "min_ms", "runs", "max_err", "peak_heap_mb" | null}
import fs from 'node:fs';
import path from 'node:path';
import { benchDir, makeInput, makeWeights, maxAbsDiff, readF32, writeShapeFiles } from './data.js';
import { SHAPES } from './shapes.js';
import { runAsJobProcess, timeRuns } from './timing.js';

export const TOLERANCE = 1e-3;

const ENGINE_MODULES = {
  wasm: './engines/wasm.js',
  'wasm-threads': './engines/wasm_threads.js',
  js: './engines/js.js',
  'tfjs-wasm': './engines/tfjs.js',
  'onnxruntime-web': './engines/ort.js',
  'onnxruntime-web-2t': './engines/ort.js',
  'native-sse2': './engines/native.js',
  'native-march': './engines/native.js',
};

export async function engineAvailable(engine, shape) {
  const mod = await import(ENGINE_MODULES[engine]);
  return engine.startsWith('native') ? mod.available(engine) : mod.available(shape);
}

function check(output, job) {
  if (job.writeRef) {
    fs.writeFileSync(job.refFile, Buffer.from(output.buffer, output.byteOffset, output.byteLength));
    return 0;
  }
  if (!job.refFile) return null;
  const err = maxAbsDiff(output, readF32(job.refFile));
  if (!(err <= TOLERANCE)) {
    const error = new Error(`output differs from the reference: max |diff| ${err.toExponential(2)} > ${TOLERANCE}`);
    error.mismatch = true;
    throw error;
  }
  return err;
}

async function runJob(job) {
  const shape = SHAPES[job.shape];
  const { L, E, H } = shape;
  if (job.engine.startsWith('native')) {
    const { runNative } = await import('./engines/native.js');
    const files = writeShapeFiles(job.shape, shape);
    const outFile = path.join(benchDir, `out_${job.engine}_${job.shape}.f32`);
    const r = runNative(job.engine, shape, files, { ...job, outFile });
    const maxErr = check(readF32(outFile), job);
    return { ms: r.ms, min_ms: r.min_ms, runs: r.runs, max_err: maxErr, peak_heap_mb: null };
  }
  const mod = await import(ENGINE_MODULES[job.engine]);
  const weights = makeWeights(E, H);
  const x = makeInput(L, E);
  const engine = await mod.create(shape, weights, {
    needWeights: job.needWeights,
    threads: job.engine === 'onnxruntime-web-2t' ? 2 : 1,
  });
  const maxErr = check(await engine.run(x), job);
  const timing = await timeRuns(() => engine.run(x), job.budgetMs);
  const heap = engine.heapBytes ? engine.heapBytes() / (1024 * 1024) : null;
  engine.dispose();
  return { ...timing, max_err: maxErr, peak_heap_mb: heap };
}

if (import.meta.url === `file://${process.argv[1]}`) runAsJobProcess(runJob);
