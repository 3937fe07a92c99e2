// One timing job of the encoder benchmark, in a process of its own:
//   node bench/encoder/worker.js '{"engine":"tfjs-wasm","tokens":12,"budgetMs":1500,"refFile":"…","writeRef":false}'
// Checks the engine's output (attention weights of every layer and the embedding) against the
// reference file to 1e-4, or writes it; then warm-up and timed runs (bench/timing.js). Prints
// one JSON line: {"ms": median, "min_ms", "runs", "max_err", "peak_heap_mb"}.
import fs from 'node:fs';
import { maxAbsDiff, readF32 } from '../data.js';
import { runAsJobProcess, timeRuns } from '../timing.js';
import { create } from './engines.js';
import { encoderInput } from './input.js';

export const TOLERANCE = 1e-4;

async function runJob(job) {
  const ids = encoderInput(job.tokens);
  const engine = await create(job.engine);
  const output = await engine.run(ids);
  let maxErr = null;
  if (job.writeRef) {
    fs.writeFileSync(job.refFile, Buffer.from(output.buffer, output.byteOffset, output.byteLength));
  } else {
    maxErr = maxAbsDiff(output, readF32(job.refFile));
    if (!(maxErr <= TOLERANCE)) {
      const error = new Error(`output differs from the reference: max |diff| ${maxErr.toExponential(2)} > ${TOLERANCE}`);
      error.mismatch = true;
      throw error;
    }
  }
  const timing = await timeRuns(() => engine.run(ids), job.budgetMs);
  const heap = engine.heapBytes ? engine.heapBytes() / (1024 * 1024) : null;
  engine.dispose();
  return { ...timing, max_err: maxErr, peak_heap_mb: heap };
}

if (import.meta.url === `file://${process.argv[1]}`) runAsJobProcess(runJob);
