// One timing job of the model benchmark, in a process of its own:
//   node bench/model/worker.js '{"engine":"onnxruntime-web","case":"gpt2-small","budgetMs":1500,"refFile":"…","writeRef":false}'
// Checks the engine's logits and every layer's attention weights against the reference file (the
// first engine's output) to 1e-4 each, or writes it; then warm-up and timed runs
// (bench/timing.js). Prints one JSON line: {"ms": median, "min_ms", "runs", "max_err", "max_err_attention",
// "peak_heap_mb" (this project's module; null for the others)}.
import fs from 'node:fs';
import { maxAbsDiff, readF32 } from '../data.js';
import { runAsJobProcess, timeRuns } from '../timing.js';
import { MODEL_CASES, modelInput } from './cases.js';
import { create } from './engines.js';

export const TOLERANCE = 1e-4;

async function runJob(job) {
  const modelCase = MODEL_CASES[job.case];
  const ids = modelInput(modelCase.tokens, modelCase.config.V);
  const engine = await create(job.engine, modelCase);
  const { logits, attentions } = await engine.run(ids);
  let maxErr = null;
  let maxErrAttention = null;
  if (job.writeRef) {
    const both = new Float32Array(logits.length + attentions.length);
    both.set(logits);
    both.set(attentions, logits.length);
    fs.writeFileSync(job.refFile, Buffer.from(both.buffer));
  } else {
    const ref = readF32(job.refFile);
    if (ref.length !== logits.length + attentions.length) {
      throw Object.assign(new Error(`expected ${ref.length} floats of logits and attention weights, got ${logits.length + attentions.length}`), { mismatch: true });
    }
    maxErr = maxAbsDiff(logits, ref.subarray(0, logits.length));
    maxErrAttention = maxAbsDiff(attentions, ref.subarray(logits.length));
    for (const [what, err] of [['logits', maxErr], ['attention weights', maxErrAttention]]) {
      if (!(err <= TOLERANCE)) {
        throw Object.assign(new Error(`${what} differ from the reference: max |diff| ${err.toExponential(2)} > ${TOLERANCE}`), { mismatch: true });
      }
    }
  }
  const timing = await timeRuns(() => engine.run(ids), job.budgetMs);
  const heap = engine.heapBytes ? engine.heapBytes() / (1024 * 1024) : null;
  engine.dispose();
  return { ...timing, max_err: maxErr, max_err_attention: maxErrAttention, peak_heap_mb: heap };
}

if (import.meta.url === `file://${process.argv[1]}`) runAsJobProcess(runJob);
