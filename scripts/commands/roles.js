// `npm run roles`: what each head of a model does, by the one rule of web/roles/evaluate.js, on
// the test half of its sentences, with 95% bootstrap intervals and the strongest baseline. Builds
// what it needs first, as `npm start` does (the WebAssembly modules, the model files); their
// messages go to standard error.
//
//   npm run roles                                 the pretrained model on web/data/roles/, as a table
//   npm run roles -- --json                       one JSON object:
//     {"source", "corpus": {"sentences", "split": {"dev", "test"}}, "rule": {...},
//      "heads": [{"layer", "head", "label", "roles": {ID: {"score", "ci": [lo, hi]}},
//                 "relations": {ID: {"score", "ci": [lo, hi], "n", "baseline": {"name", "score"}}}}]}
//   npm run roles -- --source trained             the trained model (web/sources/weights/trained-seed1.bin)
//   npm run roles -- --model DIR                  a model folder as the page opens it (config.json,
//                                                 model.safetensors, tokenizer.json); a causal one's
//                                                 relations whose key comes after the query are listed
//                                                 as not visible, as the page lists them
//   npm run roles -- --corpus FILE                the pretrained model's pronounAntecedent on JSON lines
//                                                 {"text", "pronoun", "antecedent"} (odd lines dev, even test)
//   npm run roles -- --write                      also write the table of docs/pretrained.md (or, with
//                                                 --source trained, docs/training.md) and the table the page
//                                                 reads: web/data/roles/pretrained-roles.json (or trained-roles.json,
//                                                 which also holds the core's mean weights on held-out sentences)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCES = ['pretrained', 'trained'];
/** The tables the page reads, per source: measured once here, not at every page load. */
export const TABLES = { pretrained: 'web/data/roles/pretrained-roles.json', trained: 'web/data/roles/trained-roles.json' };
/** The docs page whose table `--write` replaces, per source. */
export const DOCS = { pretrained: 'docs/pretrained.md', trained: 'docs/training.md' };
const USAGE = 'usage: npm run roles -- [--json] [--source pretrained|trained | --model DIR] [--corpus FILE] [--write]';

class UsageError extends Error {}

export function parseArgs(args) {
  const o = { json: false, source: 'pretrained', corpus: null, write: false, model: null };
  let sourceGiven = false;
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i];
    if (a === '--json') o.json = true;
    else if (a === '--write') o.write = true;
    else if (a === '--source' || a === '--corpus' || a === '--model') {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${a}: expected a value, got ${value === undefined ? 'nothing' : value}`);
      if (a === '--source') {
        if (!SOURCES.includes(value)) throw new UsageError(`--source: expected one of ${SOURCES.join(', ')}, got "${value}"`);
        o.source = value;
        sourceGiven = true;
      } else if (a === '--model') o.model = value;
      else o.corpus = value;
      i += 1;
    } else throw new UsageError(`unknown option "${a}": expected --json, --source, --model, --corpus or --write`);
  }
  if (o.model) {
    if (sourceGiven) throw new UsageError(`--model: measures the model in ${o.model}; expected no --source with it, got --source ${o.source}`);
    if (o.corpus || o.write) throw new UsageError(`--model: measures a model on the annotated data and writes nothing; expected no ${o.corpus ? '--corpus' : '--write'} with it`);
    o.source = 'model';
  }
  if (o.corpus && o.source !== 'pretrained') throw new UsageError(`--corpus: expected the pretrained source (its tokenizer reads any text), got --source ${o.source}`);
  if (o.corpus && o.write) throw new UsageError('--write: writes the table of the annotated data; expected no --corpus with it');
  return o;
}

/** A step of the set-up in a child process whose output goes to standard error. */
function step(script, args) {
  const r = spawnSync(process.execPath, [path.join(root, script), ...args], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error(`\`node ${script} ${args.join(' ')}\` failed (${r.signal ?? `exit code ${r.status}`}); its messages are above`);
}

/** The wasm modules and the model files, built when missing or stale (the build scripts skip what is up to date). */
function ensureBuilt(source) {
  const wasm = path.join(root, 'web/lib/wasm');
  const need = { trained: ['mha_train.js', 'mha_train.wasm'], model: ['mha_models.js', 'mha_models.wasm'] }[source] ?? ['mha_encoder.js', 'mha_encoder.wasm'];
  if (!need.every((f) => fs.existsSync(path.join(wasm, f)))) {
    step('scripts/build/setup.js', ['start']);
    step('scripts/build/build.js', ['--wasm']);
  }
  if (source === 'pretrained') step('scripts/build/build-model.js', []);
}

/** The table a source's heads get, computed by the core's maps and web/roles/; with evidence, the table the page reads. */
export async function computeRoles({ source = 'pretrained', corpus = null, model = null } = {}, { evidence = false } = {}) {
  const measure = await import('../../web/roles/measure.js');
  const read = async (name) => JSON.parse(fs.readFileSync(path.join(root, 'web/data/roles', name), 'utf8'));
  if (source === 'model') {
    // the page's model source, on this thread: the same reading of the text and the same rule
    const [{ loadMha }, { loadModel }, { ModelSource }] = await Promise.all([
      import('../../web/lib/index.js'), import('../../web/lib/models.js'), import('../../web/sources/model.js')]);
    let opened;
    try {
      opened = await loadModel(path.resolve(model));
    } catch (error) {
      throw new UsageError(`--model: expected a model folder (config.json, model.safetensors, tokenizer.json), got ${model}: ${error.message}`);
    }
    const shown = new ModelSource({ opened: { name: path.basename(path.resolve(model)), stamp: 'cli', model: opened } });
    try {
      await shown.load(await loadMha());
      return await shown.measureRoles(undefined, read);
    } finally {
      opened.dispose();
    }
  }
  if (source === 'trained') {
    const { loadTrainer } = await import('../../web/lib/train.js');
    const trainer = await loadTrainer({ seed: 1, heldOut: measure.TRAINED_HELD_OUT });
    trainer.loadWeights(new Uint8Array(fs.readFileSync(path.join(root, 'web/sources/weights/trained-seed1.bin'))));
    try {
      return evidence ? await measure.trainedTable(trainer) : await measure.trainedRoles(trainer);
    } finally {
      trainer.dispose();
    }
  }
  // a corpus is read and checked before the model loads: a bad line is named at once
  let items = null;
  if (corpus) {
    const { parseCorpus } = await import('../../web/roles/sentences.js');
    let contents;
    try {
      contents = fs.readFileSync(corpus, 'utf8');
    } catch (error) {
      throw new UsageError(`--corpus: expected a readable file of JSON lines, got ${corpus} (${error.code ?? error.message})`);
    }
    items = parseCorpus(contents, corpus);
  }
  const { loadEncoder } = await import('../../web/lib/encoder.js');
  const encoder = await loadEncoder({ dtype: 'float16' });  // what the page downloads and computes with
  try {
    if (items) {
      const [{ default: nlp }, { tagText, analyseTokens }] = await Promise.all([import('compromise/three'), import('../../web/sources/tokens.js')]);
      const tagged = async (text) => analyseTokens(tagText(nlp, text));
      const result = await measure.measurePretrained(encoder, items, { corpus: true, tagged, evidence });
      return { source: 'pretrained', ...result, corpus: { ...result.corpus, file: corpus } };
    }
    return await measure.pretrainedRoles(encoder, read, { evidence });
  } finally {
    encoder.dispose();
  }
}

/** The result without what only the page shows (the items, the held-out mean weights): what --json prints. */
export const summary = ({ evidence, heldOut, ...rest }) => rest;

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`[roles] ${error.message}\n${USAGE}`);
    process.exit(2);
  }
  ensureBuilt(o.source);
  const result = await computeRoles(o, { evidence: o.write });
  if (o.write) {
    fs.writeFileSync(path.join(root, TABLES[o.source]), `${JSON.stringify(result)}\n`);
    console.error(`[roles] wrote ${TABLES[o.source]}`);
    const { replaceDocsTable } = await import('../../web/roles/table.js');
    const docs = path.join(root, DOCS[o.source]);
    fs.writeFileSync(docs, replaceDocsTable(fs.readFileSync(docs, 'utf8'), result));
    console.error(`[roles] wrote ${DOCS[o.source]}'s table`);
  }
  if (o.json) process.stdout.write(`${JSON.stringify(summary(result))}\n`);
  else {
    const { textTable } = await import('../../web/roles/table.js');
    process.stdout.write(textTable(result));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`[roles] ${error?.message ?? error}${error instanceof UsageError ? `\n${USAGE}` : ''}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}
