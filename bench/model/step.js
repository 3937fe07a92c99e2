// Writing on, in the model section of `npm run bench`: one step of model.extend() (one new
// token, its logits and its attention row in every layer) on a key/value cache of 512 tokens,
// against a whole model.run() of the 513 tokens it makes, on mha_models.wasm (one thread), in a
// process of its own:
//   node bench/model/step.js '{"case":"gpt2-small","budgetMs":1500}'
// GPT-2 small's shape on a full run (build/bench/gpt2-small, as bench/model/run.js writes it);
// `--quick` the golden test's small GPT-2 (32 positions: a step at 31 against a run of 32).
// Before timing, the step's logits and attention rows are checked against the whole run's last
// rows to 1e-4. Each timed step writes position 512 again (extend(…, { from: 512 })), so every
// step costs the same. Prints one JSON line: {"tokens", "step_ms", "run_ms", "ratio", "max_err", …}.
import { loadModel } from '../../web/lib/models.js';
import { maxAbsDiff } from '../data.js';
import { runAsJobProcess, timeRuns } from '../timing.js';
import { MODEL_CASES, modelInput } from './cases.js';

export const STEP_CASES = { full: { case: 'gpt2-small', cached: 512 }, quick: { case: 'gpt2-tied', cached: 31 } };
const TOLERANCE = 1e-4;

async function runJob(job) {
  const modelCase = MODEL_CASES[job.case];
  const cached = job.cached;
  const ids = modelInput(cached + 1, modelCase.config.V);
  const model = await loadModel(modelCase.dir, { threads: false });
  const { numLayers: L, vocabSize: V } = model.config;
  const full = model.run(ids);
  model.extend(ids.slice(0, cached), { from: 0 });
  const step = model.extend(ids.slice(cached), { from: cached });
  const T = cached + 1;
  let maxErr = maxAbsDiff(step.logits.data, full.logits.data.subarray(cached * V, T * V));
  for (let l = 0; l < L; ++l) {
    const rows = step.layers[l].weights;  // (H, 1, T)
    const all = full.layers[l].weights;   // (H, T, T)
    for (let h = 0; h < rows.shape[0]; ++h) {
      maxErr = Math.max(maxErr, maxAbsDiff(rows.data.subarray(h * T, (h + 1) * T), all.data.subarray((h * T + cached) * T, (h * T + cached + 1) * T)));
    }
  }
  if (!(maxErr <= TOLERANCE)) throw new Error(`the cached step differs from the whole run: max |diff| ${maxErr.toExponential(2)} > ${TOLERANCE}`);
  const stepTiming = await timeRuns(() => model.extend(ids.slice(cached), { from: cached }), job.budgetMs);
  const runTiming = await timeRuns(() => model.run(ids), job.budgetMs);
  model.dispose();
  return {
    case: job.case, cached, tokens: T, step_ms: stepTiming.ms, step_min_ms: stepTiming.min_ms, step_runs: stepTiming.runs,
    run_ms: runTiming.ms, run_min_ms: runTiming.min_ms, run_runs: runTiming.runs, ratio: stepTiming.ms / runTiming.ms, max_err: maxErr,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) runAsJobProcess(runJob);
