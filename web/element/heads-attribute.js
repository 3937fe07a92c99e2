// What <mha-explorer>'s attributes ask for: which source of heads (web/sources), made when it
// is needed, and the key that names it (the same key: the same heads, nothing to reload).
import { D_MODEL } from '../sources/embeddings.js';
import { NUM_HEADS } from '../sources/designed-heads.js';

export function positiveIntegerAttribute(value, fallback) {
  if (value === null || value === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : NaN;
}

/** What the heads attribute asks for. */
function parseHeads(value) {
  const v = (value ?? 'designed').trim();
  if (v === '' || v === 'designed') return { kind: 'designed' };
  if (v === 'pretrained') return { kind: 'pretrained' };
  const random = /^random(?::(\d+))?$/.exec(v);
  if (random) return { kind: 'random', seed: random[1] === undefined ? 0 : Number(random[1]) };
  return { kind: 'file', url: new URL(v, document.baseURI).href };
}

/** A source of heads for the attributes (not loaded yet), and the key that names it. */
export async function sourceFor(element, onProgress) {
  const heads = parseHeads(element.getAttribute('heads'));
  if (heads.kind === 'pretrained') {
    const layer = Number(element.getAttribute('layer') ?? 0);
    if (!Number.isInteger(layer) || layer < 0 || layer > 1) throw new Error(`layer must be 0 or 1 for the pretrained model (2 layers), got "${element.getAttribute('layer')}"`);
    const { PretrainedSource, MODEL_URL } = await import('../sources/pretrained.js');
    const modelUrl = element.hasAttribute('model-url') ? new URL(element.getAttribute('model-url'), document.baseURI) : MODEL_URL;
    return { key: JSON.stringify([heads, String(modelUrl), layer]), early: true, make: () => new PretrainedSource({ layer, modelUrl, onProgress }) };
  }
  if (heads.kind === 'file') {
    const { FileSource, fetchWeights, readWeightsFile } = await import('../sources/file.js');
    const bytes = await fetchWeights(heads.url);
    const numHeads = element.hasAttribute('num-heads') ? positiveIntegerAttribute(element.getAttribute('num-heads'), NUM_HEADS) : undefined;
    const file = { name: heads.url, ...readWeightsFile(bytes, heads.url, { numHeads }) };
    return { key: JSON.stringify([heads, numHeads]), make: () => new FileSource({ file }) };
  }
  const dModel = positiveIntegerAttribute(element.getAttribute('d-model'), D_MODEL);
  const numHeads = positiveIntegerAttribute(element.getAttribute('num-heads'), NUM_HEADS);
  if (!(dModel > 0) || !(numHeads > 0)) {
    throw new Error(`d-model and num-heads must be positive integers, got "${element.getAttribute('d-model')}" and "${element.getAttribute('num-heads')}"`);
  }
  if (dModel % numHeads !== 0) throw new Error(`num-heads ${numHeads} must divide d-model ${dModel}`);
  if (heads.kind === 'designed') {
    if (dModel !== D_MODEL || numHeads !== NUM_HEADS) {
      throw new Error(`the designed heads are ${NUM_HEADS} heads of a ${D_MODEL}-wide model (got d-model ${dModel}, num-heads ${numHeads}); use heads="random:SEED" for other sizes`);
    }
    const { DesignedSource } = await import('../sources/designed.js');
    return { key: 'designed', make: () => new DesignedSource() };
  }
  const { RandomSource } = await import('../sources/random.js');
  return { key: JSON.stringify([heads, dModel, numHeads]), make: () => new RandomSource({ seed: heads.seed, embedDim: dModel, numHeads }) };
}
