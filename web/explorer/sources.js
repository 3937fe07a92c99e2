// Where the explorer's heads come from, chosen in one place for the page, the element and a link.
// A spec says what was asked for; createSource makes the HeadSource (web/sources) it names, not
// loaded yet. Specs:
//
//   { id: 'designed' }                                    the eight designed heads (64 wide)
//   { id: 'random', seed, embedDim?, numHeads? }          PyTorch's initialisation from a seed
//   { id: 'file', file }                                   weights read by readWeightsFile (bytes a user picked)
//   { id: 'file', url, numHeads? }                         weights fetched from a URL
//   { id: 'trained' }                                      the small model trained on the grammar
//   { id: 'pretrained', modelUrl? }                        Universal Sentence Encoder lite
//   { id: 'model', opened }                                a model the user opened (openModelFiles)
//   { id: 'model', url }                                   a model folder (Hugging Face layout) fetched from a URL
//   { id: 'model', url: 'hf:owner/name', endpoint? }       a model on the Hugging Face Hub (or a mirror), cached
//
// A model fetched (url) may say how long its tokenizer may take on one text: tokenizeTimeLimit,
// in ms (the element's attribute and the link's parameter tokenize-time-limit; tokenize-limit.js
// checks it when the model is opened).
//
// The layer shown is not part of a spec: a source has its layers once loaded (explorer.layer).

import { D_MODEL } from '../sources/embeddings.js';
import { NUM_HEADS } from '../sources/designed-heads.js';

/** @typedef {import('../sources/source.js').HeadSource} HeadSource */
/**
 * Weights a user picked, read (readWeightsFile) and named; `stamp` tells two picks of one name apart.
 * @typedef {{ name: string, stamp?: string } & ReturnType<typeof import('../sources/file.js').readWeightsFile>} WeightsFile
 */
/**
 * @typedef {{ id: 'designed' }
 *   | { id: 'random', seed: number, embedDim?: number, numHeads?: number }
 *   | { id: 'file', file?: WeightsFile, url?: string, numHeads?: number }
 *   | { id: 'trained' }
 *   | { id: 'pretrained', modelUrl?: string }
 *   | { id: 'model', opened?: OpenedModel, url?: string, endpoint?: string, tokenizeTimeLimit?: number | string }} SourceSpec
 */
/** @typedef {import('../sources/model.js').OpenedModel} OpenedModel */
/** @typedef {(name: string) => string | null | undefined} AttributeReader */

export const SOURCE_IDS = ['designed', 'random', 'file', 'trained', 'pretrained', 'model'];
export const MAX_SEED = 2147483647;

/** A problem with what was asked for, said in words (an Error the views show as it is). */
export class SpecError extends Error {}

/** A Hub repository id as a link or attribute gives it: owner/name (hub.js checks it in full when it opens). */
const HUB_ID = /^[A-Za-z0-9][\w.-]{0,95}(?:\/[A-Za-z0-9][\w.-]{0,95})?$/;

/**
 * A model spec with its tokenizer's time limit as given, when one is (checked when the model is
 * opened, by tokenize-limit.js).
 * @param {SourceSpec & { id: 'model' }} spec
 * @param {string | number | null | undefined} limit
 */
const limited = (spec, limit) => (limit === null || limit === undefined || String(limit).trim() === '' ? spec : { ...spec, tokenizeTimeLimit: limit });

/**
 * The spec of a model on the Hub, `owner/name` (or `hf:owner/name`), from a mirror at
 * `endpoint`; `tokenizeTimeLimit`: tokenize-time-limit, in ms.
 * @param {string} id
 * @param {string | null | undefined} [endpoint]
 * @param {string | number | null} [tokenizeTimeLimit]
 * @returns {SourceSpec}
 */
export function hubSpec(id, endpoint, tokenizeTimeLimit) {
  const repo = id.trim().replace(/^hf:/, '');
  if (!HUB_ID.test(repo) || repo.includes('..')) throw new SpecError(`model: expected a Hugging Face Hub repository id such as openai-community/gpt2, got ${JSON.stringify(id.slice(0, 80))}`);
  if (endpoint === null || endpoint === undefined || endpoint === '') return limited({ id: 'model', url: `hf:${repo}` }, tokenizeTimeLimit);
  let url;
  try {
    url = new URL(endpoint);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new SpecError(`the Hub's address must be an http(s) URL such as https://huggingface.co, got ${JSON.stringify(endpoint.slice(0, 80))}`);
  return limited({ id: 'model', url: `hf:${repo}`, endpoint: url.href.replace(/\/+$/, '') }, tokenizeTimeLimit);
}

/** The Hub repository a spec opens (`owner/name`), or null. @param {SourceSpec | null | undefined} spec */
export function hubRepoOf(spec) {
  return spec?.id === 'model' && typeof spec.url === 'string' && spec.url.startsWith('hf:') ? spec.url.slice(3) : null;
}

/**
 * A whole number n >= 1 from an attribute's text; the fallback when there is none; NaN when it is not one.
 * @param {string | number | null | undefined} value
 * @param {number} fallback
 */
export function positiveInteger(value, fallback) {
  if (value === null || value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : NaN;
}

/**
 * The spec an element's attributes ask for: heads (designed | random | random:SEED | trained |
 * pretrained | model | a weights URL), d-model, num-heads, model-url (the pretrained encoder's
 * files with heads="pretrained", else a Hugging Face model folder), model and hub-endpoint (a
 * model on the Hub), tokenize-time-limit (a model's). `base`: what URLs are relative to.
 * @param {AttributeReader} get
 * @param {string | URL} [base]
 * @returns {SourceSpec}
 */
export function specFromAttributes(get, base) {
  const hubModel = get('model');
  if (hubModel !== null && hubModel !== undefined && hubModel.trim() !== '') return hubSpec(hubModel, get('hub-endpoint'), get('tokenize-time-limit'));
  const modelUrl = get('model-url');
  const heads = (get('heads') ?? (modelUrl ? 'model' : 'designed')).trim();
  if (heads === 'model') {
    if (!modelUrl) throw new SpecError('heads="model" needs model-url: the URL of a folder with config.json, model.safetensors and tokenizer.json');
    return limited({ id: 'model', url: new URL(modelUrl, base).href }, get('tokenize-time-limit'));
  }
  if (heads === '' || heads === 'designed') return sized({ id: 'designed' }, get);
  if (heads === 'trained') return { id: 'trained' };
  if (heads === 'pretrained') {
    return modelUrl ? { id: 'pretrained', modelUrl: new URL(modelUrl, base).href } : { id: 'pretrained' };
  }
  const random = /^random(?::(\d+))?$/.exec(heads);
  if (random) {
    const seed = random[1] === undefined ? 0 : Number(random[1]);
    if (seed > MAX_SEED) throw new SpecError(`heads: the seed must be a whole number from 0 to ${MAX_SEED}, got ${random[1]}`);
    return sized({ id: 'random', seed }, get);
  }
  const numHeads = get('num-heads');
  return numHeads === null || numHeads === undefined
    ? { id: 'file', url: new URL(heads, base).href }
    : { id: 'file', url: new URL(heads, base).href, numHeads: checkedCount('num-heads', numHeads) };
}

/** @param {string} name @param {string} text */
function checkedCount(name, text) {
  const n = positiveInteger(text, NaN);
  if (!(n > 0)) throw new SpecError(`${name} must be a positive integer, got "${text}"`);
  return n;
}

/**
 * d-model and num-heads for the heads over the token features (designed or random).
 * @param {{ id: 'designed' } | { id: 'random', seed: number }} spec
 * @param {AttributeReader} get
 * @returns {SourceSpec}
 */
function sized(spec, get) {
  const embedDim = positiveInteger(get('d-model'), D_MODEL);
  const numHeads = positiveInteger(get('num-heads'), NUM_HEADS);
  if (!(embedDim > 0) || !(numHeads > 0)) {
    throw new SpecError(`d-model and num-heads must be positive integers, got "${get('d-model')}" and "${get('num-heads')}"`);
  }
  if (embedDim % numHeads !== 0) throw new SpecError(`num-heads ${numHeads} must divide d-model ${embedDim}`);
  if (spec.id === 'designed') {
    if (embedDim !== D_MODEL || numHeads !== NUM_HEADS) {
      throw new SpecError(`the designed heads are ${NUM_HEADS} heads of a ${D_MODEL}-wide model (got d-model ${embedDim}, num-heads ${numHeads}); use heads="random:SEED" for other sizes`);
    }
    return spec;
  }
  return embedDim === D_MODEL && numHeads === NUM_HEADS ? spec : { ...spec, embedDim, numHeads };
}

/**
 * The name of a spec's heads: the same key, the same weights (nothing to load again).
 * @param {SourceSpec | null | undefined} spec
 */
export function specKey(spec) {
  if (!spec) return '';
  const { file, opened, ...rest } = /** @type {{ file?: WeightsFile, opened?: OpenedModel }} */ (spec);
  if (opened) return JSON.stringify({ ...rest, opened: opened.name, stamp: opened.stamp });
  return JSON.stringify(file ? { ...rest, file: file.name, stamp: file.stamp } : rest);
}

/**
 * The HeadSource a spec names, not loaded yet; a SpecError when the spec is not one. `worker`:
 * the explorer's worker option; 'never' keeps every source on the page's thread (a model is
 * otherwise opened in a worker of its own; the others compute where the explorer says).
 * `limitSetting`: how a tokenizer's time-out names what sets its limit.
 * @param {SourceSpec} spec
 * @param {{ onProgress?: (p: { loaded: number, total: number, file: string, plan?: import('../lib/models.js').HubPlan }) => void, worker?: string, limitSetting?: string | null }} [options]
 * @returns {Promise<HeadSource>}
 */
export async function createSource(spec, { onProgress, worker = 'auto', limitSetting = null } = {}) {
  switch (spec?.id) {
    case 'designed': {
      const { DesignedSource } = await import('../sources/designed.js');
      return new DesignedSource();
    }
    case 'random': {
      if (!Number.isInteger(spec.seed) || spec.seed < 0 || spec.seed > MAX_SEED) {
        throw new SpecError(`The seed must be a whole number from 0 to ${MAX_SEED}, got "${spec.seed}".`);
      }
      const { RandomSource } = await import('../sources/random.js');
      return new RandomSource({ seed: spec.seed, embedDim: spec.embedDim, numHeads: spec.numHeads });
    }
    case 'file': {
      const { FileSource, fetchWeights, readWeightsFile } = await import('../sources/file.js');
      if (spec.file) return new FileSource({ file: spec.file });
      if (!spec.url) throw new SpecError('Load a state_dict file first.');
      const bytes = await fetchWeights(spec.url);
      return new FileSource({ file: { name: spec.url, url: spec.url, ...readWeightsFile(bytes, spec.url, { numHeads: spec.numHeads }) } });
    }
    case 'trained': {
      const { TrainedSource } = await import('../sources/trained.js');
      return new TrainedSource();
    }
    case 'pretrained': {
      const { PretrainedSource } = await import('../sources/pretrained.js');
      return new PretrainedSource({ ...(spec.modelUrl ? { modelUrl: spec.modelUrl } : {}), onProgress });
    }
    case 'model': {
      if (!spec.opened && !spec.url) throw new SpecError('Open a model folder first (config.json, model.safetensors and tokenizer.json).');
      const [{ ModelSource }, { tokenizeTimeLimitOf }] = await Promise.all([import('../sources/model.js'), import('./tokenize-limit.js')]);
      const tokenizeTimeLimit = tokenizeTimeLimitOf(spec.tokenizeTimeLimit);
      return new ModelSource({ opened: spec.opened, url: spec.url, endpoint: spec.endpoint, tokenizeTimeLimit, limitSetting, onProgress, inWorker: worker !== 'never' });
    }
    default:
      throw new SpecError(`There is no source of heads called "${/** @type {{ id?: unknown } | undefined} */ (spec)?.id}" (expected one of ${SOURCE_IDS.join(', ')}).`);
  }
}

/**
 * Weights a user picked, read for the heads over the page's token features (64 wide).
 * @param {Uint8Array} bytes
 * @param {string} name
 * @param {{ width?: number }} [options]
 * @returns {Promise<WeightsFile>}
 */
export async function readPickedWeights(bytes, name, { width } = {}) {
  const { readWeightsFile } = await import('../sources/file.js');
  return { name, stamp: `${bytes.length}:${Date.now()}`, ...readWeightsFile(bytes, name, { width }) };
}
