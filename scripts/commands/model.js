// `npm run model -- --json --model DIR`: a GPT-2- or BERT-family checkpoint in Hugging Face
// layout (DIR holds config.json, model.safetensors in float32, float16 or bfloat16, and
// tokenizer.json) on the texts of standard input, one per line, computed by the WebAssembly
// core in Node.js (web/lib/models.js). Builds the WebAssembly modules first, as `npm start`
// does; those messages go to standard error.
//
//   echo 'the king follows' | npm run model -- --json --model tests/golden/models/gpt2-tied
//     {"text": …, "ids": [..], "layers": [{"weights": [head][query][key]}, ..], "next": [[id, probability], ..]}
//     one line per text, in order; "next": the 5 most probable tokens at the last position, for
//     models with a causal LM head (GPT-2); a masked-LM (BERT) gives "masked": the 5 most
//     probable at each [MASK], as [{"position", "top": [[id, probability], ..]}]
//   npm run model -- --model DIR       the tokens of each text and the next-token guesses, one line each
//   --ids                              each line is a JSON array of token ids, run as it is (no BOS or
//                                      other special token added); its "text" is the line
//   --top K                            K predictions instead of 5
//   --stats                            then one last line {"stats": {"moduleBytes", "weightBytes", "loadMs", "runMs"}}:
//                                      the models' module's memory and the weights' share of it, in bytes;
//                                      the time to open the model and to run every text, in ms
//   --model hf:OWNER/NAME              a model on the Hugging Face Hub by its id (web/lib/hub.js): its
//                                      files kept in $MHA_HUB_CACHE, else $HF_HOME/mha-explorer
//                                      (~/.cache/huggingface/mha-explorer), so a second run needs no
//                                      network; what will be fetched, and each file as it comes, on
//                                      standard error
//   --revision REV                     a branch, tag or commit of it (default main)
//   --endpoint URL                     the Hub or a mirror (default $HF_ENDPOINT, else https://huggingface.co)
//   --no-cache                         fetch it again and keep nothing
//   --generate N                       a causal model writes N tokens after each text, one cached step each
//                                      (model.generate): {"text", "ids", "written": [id, ..], "pieces":
//                                      [..], "probabilities": [..], "continuation": the written text}
//   --temperature T, --top-k K         sample each token from softmax(logits / T) over the K most
//                                      probable (default: the most probable token)
//   --seed S                           the sampler's seed (default 0): the same seed writes the same text
//   --tokenize-time-limit MS           the most one text may take to tokenize (default 5000): texts are
//                                      tokenized in a thread of their own, stopped after that (a
//                                      tokenizer.json whose regular expressions backtrack without end);
//                                      that text's line gives the error, and the next texts are run
// A text that cannot be run gives {"text", "error": {"code", "message"}} on its line, and the
// exit code is 1 at the end; a folder that cannot be opened is one message and exit code 1.
import path from 'node:path';
import { float32Number, nested, readStdin, step } from './cli.js';

/** @type {typeof import('../../web/lib/errors.js').MhaError} */
let MhaError;

function usage(message) {
  console.error(`${message}\nusage: npm run model -- [--json] [--ids] [--top K] [--stats] --model DIR|hf:OWNER/NAME [--revision REV] [--endpoint URL] [--no-cache] [--tokenize-time-limit MS] [--generate N [--temperature T] [--top-k K] [--seed S]]  (texts on standard input, one per line)`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { json: false, top: 5, model: null, build: true, stats: false, revision: undefined, endpoint: undefined, cache: true, ids: false, timeLimit: undefined, generate: undefined, temperature: undefined, topK: undefined, seed: undefined };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--json') options.json = true;
    else if (a === '--no-build') options.build = false;
    else if (a === '--stats') options.stats = true;
    else if (a === '--ids') options.ids = true;
    else if (a === '--model') options.model = argv[++i];
    else if (a === '--top') options.top = Number(argv[++i]);
    else if (a === '--revision') options.revision = argv[++i];
    else if (a === '--endpoint') options.endpoint = argv[++i];
    else if (a === '--no-cache') options.cache = false;
    else if (a === '--tokenize-time-limit') options.timeLimit = Number(argv[++i]);
    else if (a === '--generate') options.generate = Number(argv[++i]);
    else if (a === '--temperature') options.temperature = Number(argv[++i]);
    else if (a === '--top-k') options.topK = Number(argv[++i]);
    else if (a === '--seed') options.seed = Number(argv[++i]);
    else usage(`unknown option ${a}`);
  }
  if (!options.model) usage('--model DIR or --model hf:OWNER/NAME is required');
  if ((options.revision !== undefined || options.endpoint !== undefined || !options.cache) && !options.model.startsWith('hf:')) {
    usage('--revision, --endpoint and --no-cache are for a model on the Hub (--model hf:OWNER/NAME)');
  }
  if (!Number.isInteger(options.top) || options.top < 1) usage('--top: expected a whole number >= 1');
  if (options.timeLimit !== undefined && !(options.timeLimit > 0)) usage('--tokenize-time-limit: expected a number of milliseconds > 0');
  if (options.generate !== undefined && !(Number.isInteger(options.generate) && options.generate >= 1)) usage('--generate: expected a whole number of tokens >= 1');
  if (options.generate === undefined && (options.temperature !== undefined || options.topK !== undefined || options.seed !== undefined)) {
    usage('--temperature, --top-k and --seed are for --generate N');
  }
  return options;
}

/** One text's line of --generate: the text, its ids, what the model wrote after it. */
function written(model, text, ids, options) {
  const { temperature, topK, seed } = options;
  const sampling = Object.fromEntries(Object.entries({ temperature, topK, seed }).filter(([, v]) => v !== undefined));
  const w = model.generate(options.generate, { prompt: ids, ...sampling });
  const reading = model.tokenizer ? model.read(w.ids) : null;
  return {
    text, ids, written: w.ids, ...(reading ? { pieces: reading.pieces, continuation: reading.texts.join('') } : {}),
    probabilities: w.steps.map((s) => float32Number(Math.fround(s.probability))),
  };
}

/** @param {number} bytes */
const megabytes = (bytes) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`);

/** What a Hub model will fetch, before the weights: on standard error. */
function reportPlan(plan) {
  const fetched = plan.files.filter((f) => !f.cached);
  console.error(`[model] ${plan.repo} at ${plan.revision} (commit ${plan.commit.slice(0, 12)}) from ${plan.endpoint}: ` +
    `${plan.files.length} files, ${megabytes(plan.bytes)}; ${fetched.length ? `${megabytes(plan.downloadBytes)} to download (${fetched.map((f) => f.file).join(', ')})` : 'all cached'}; fits in memory`);
}

/** A line per file downloaded, when it is whole. */
function reportProgress({ file, loaded, total }) {
  if (loaded === total && total > 0) console.error(`[model] ${file}: ${megabytes(total)} downloaded`);
}

/** A line of --ids: a JSON array of integer token ids. */
function idsOf(line) {
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    throw new MhaError('INVALID_ARGUMENT', `--ids: expected a JSON array of token ids, got ${JSON.stringify(line.slice(0, 60))} (not JSON)`);
  }
  if (!Array.isArray(value)) throw new MhaError('INVALID_ARGUMENT', `--ids: expected a JSON array of token ids, got ${value === null ? 'null' : typeof value}`);
  const bad = value.findIndex((id) => !Number.isInteger(id) || id < 0);
  if (bad >= 0) throw new MhaError('INVALID_ARGUMENT', `--ids: expected token ids (integers >= 0), got ${JSON.stringify(value[bad])} at index ${bad}`);
  return value;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.build) {
    step('model', 'scripts/build/setup.js', ['start']);
    step('model', 'scripts/build/build.js', ['--wasm']);
  }
  const { loadModel } = await import('../../web/lib/models.js');
  ({ MhaError } = await import('../../web/lib/errors.js'));
  let model;
  const loadStart = performance.now();
  try {
    model = options.model.startsWith('hf:')
      ? await loadModel(options.model, { revision: options.revision, endpoint: options.endpoint, cache: options.cache, onPlan: reportPlan, onProgress: reportProgress })
      : await loadModel(path.resolve(options.model));
  } catch (error) {
    if (error?.name !== 'MhaError') throw error;
    console.error(`[model] ${error.message}`);
    process.exit(1);
  }
  const maskId = model.tokenizer?.maskId ?? undefined;
  // texts go to the tokenizer's own thread, where one that takes too long can be stopped
  const tokenizing = model.tokenizer && !options.ids ? model.tokenizerWorker({ timeLimit: options.timeLimit, setting: '--tokenize-time-limit' }) : null;
  const causal = model.config.task === 'next-token';
  const loadMs = performance.now() - loadStart;
  const lines = await readStdin();
  let runMs = 0;
  let failed = 0;
  const out = [];
  for (const text of lines) {
    let line;
    try {
      const runStart = performance.now();
      const input = options.ids ? idsOf(text) : tokenizing ? await tokenizing.encode(text) : text;
      if (options.generate !== undefined) {
        const w = written(model, text, typeof input === 'string' ? model.encode(input) : input, options);
        runMs += performance.now() - runStart;
        out.push(options.json ? JSON.stringify(w) : `${w.ids.length} tokens, then ${w.written.length} written: ${w.continuation !== undefined ? JSON.stringify(w.continuation) : w.written.join(' ')}`);
        continue;
      }
      const r = model.run(input);
      runMs += performance.now() - runStart;
      const next = causal ? model.top(r, options.top).map(([id, p]) => [id, float32Number(Math.fround(p))]) : undefined;
      const masked = !causal && r.logits && maskId !== undefined
        ? r.ids.flatMap((id, position) => (id === maskId
          ? [{ position, top: model.top(r, options.top, position).map(([i, p]) => [i, float32Number(Math.fround(p))]) }] : []))
        : undefined;
      if (options.json) {
        line = JSON.stringify({
          text, ids: r.ids, layers: r.layers.map((layer) => ({ weights: nested(layer.weights) })),
          ...(next ? { next } : {}), ...(masked ? { masked } : {}),
        });
      } else {
        const guesses = next ? ` → ${next.map(([id, p]) => `${JSON.stringify(model.tokens([id])[0])} ${p.toFixed(3)}`).join(', ')}` : '';
        line = `${r.ids.length} tokens: ${model.tokens(r.ids).join(' ')}${guesses}`;
      }
    } catch (error) {
      if (error?.name !== 'MhaError') throw error;
      failed += 1;
      line = options.json ? JSON.stringify({ text, error: { code: error.code, message: error.message } }) : `error: ${error.message}`;
    }
    out.push(line);
    if (out.length >= 64) process.stdout.write(`${out.splice(0).join('\n')}\n`);
  }
  if (out.length) process.stdout.write(`${out.join('\n')}\n`);
  if (options.stats) {
    const { moduleBytes, weightBytes } = model.memory();
    process.stdout.write(`${JSON.stringify({ stats: { moduleBytes, weightBytes, loadMs: Math.round(loadMs), runMs: Math.round(runMs) } })}\n`);
  }
  tokenizing?.dispose();
  model.dispose();
  if (failed) console.error(`[model] ${failed} of ${lines.length} texts could not be run (their lines say why)`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.error(`[model] ${error?.message ?? error}`);
  process.exit(1);
});
