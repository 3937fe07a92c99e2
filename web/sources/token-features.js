// Heads over the lesson's token features: one attention layer whose input is the feature vector
// of each token (embeddings.js: position, part of speech, class, agreement, a shallow parse),
// computed by the core. The designed, random and file sources are this with different weights.
import { analyseTokens, MAX_TOKENS, SEMANTIC_CLASSES } from './tokens.js';
import { embedTokens, D_MODEL } from './embeddings.js';
import { EXAMPLES } from './examples.js';
import { tagSentence } from './tagger.js';
import { analyseHeads, tokenDifferences, tooManyTokens } from './source.js';
import { describeByStatistics } from './describe.js';
import { parseLimits } from './parse-limits.js';

/** @typedef {import('./source.js').HeadSource} HeadSource */
/** @typedef {import('./source.js').AnyMhaModule} AnyMhaModule */
/** @typedef {import('./source.js').AnyAttention} AnyAttention */
/** @typedef {import('../lib/index.js').AttentionConfig} AttentionConfig */
/** @typedef {import('../lib/index.js').HeadStatistics} HeadStatistics */
/** @typedef {import('./tokens.js').Token & { tag: string, className: string, details: string[] }} FeatureToken */
/**
 * A sentence over the token features: the analysed tokens (as the strip shows them) and their
 * (L, 64) features.
 * @typedef {import('./source.js').Sentence<FeatureToken> & { features: Float32Array }} FeatureSentence
 */

/**
 * A fixed (64 → width) projection of the token features, for models of another width.
 * @param {Float32Array} x  (rows, 64)
 * @param {number} rows
 * @param {number} width
 */
export function projectFeatures(x, rows, width) {
  if (width === D_MODEL) return x;
  const out = new Float32Array(rows * width);
  let s = 12345;
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 8) / 0x1000000) * 2 - 1; // uniform in [-1, 1)
  };
  const scale = Math.sqrt(3 / D_MODEL); // unit variance per output for unit-variance inputs
  const projection = new Float32Array(D_MODEL * width);
  for (let k = 0; k < projection.length; k += 1) projection[k] = next() * scale;
  for (let i = 0; i < rows; i += 1) {
    for (let f = 0; f < D_MODEL; f += 1) {
      const v = x[i * D_MODEL + f];
      if (v === 0) continue;
      for (let j = 0; j < width; j += 1) out[i * width + j] += v * projection[f * width + j];
    }
  }
  return out;
}

/**
 * What the token strip shows of an analysed token: its tag, the parse in words, its class colour.
 * @param {import('./tokens.js').Token[]} tokens
 * @returns {FeatureToken[]}
 */
function withDisplay(tokens) {
  return tokens.map((t) => Object.assign(t, {
    tag: t.pos === 'PUNCT' ? 'PUNCT' : t.pos,
    className: `cls-${SEMANTIC_CLASSES.indexOf(t.cls)}`,
    details: [t.pos === 'PUNCT' ? 'punctuation' : t.pos, t.cls, t.number, t.isSubject ? 'subject' : null,
      t.subject >= 0 ? `subject: ${tokens[t.subject].text}` : null,
      t.modifies >= 0 ? `describes: ${tokens[t.modifies].text}` : null].filter((d) => typeof d === 'string'),
  }));
}

/**
 * The tagger's shallow parse in words: what the token features encode, as the tagger's guess,
 * with why the text is likely outside what it reads, where it is (parse-limits.js).
 * @param {import('./tokens.js').Token[]} t
 */
export function parseSummary(t) {
  const subjects = t.filter((x) => x.pos === 'VERB' && x.subject >= 0).map((x) => `${x.text} → ${t[x.subject].text}`);
  const modifiers = t.filter((x) => x.modifies >= 0).map((x) => `${x.text} → ${t[x.modifies].text}`);
  const pronouns = t.filter((x) => x.pronoun && x.pronoun.person === 3)
    .map((x) => {
      const p = /** @type {import('./tokens.js').Pronoun} */ (x.pronoun);
      return `${x.text} (${[p.gender ? { m: 'masculine', f: 'feminine', n: 'neuter' }[p.gender] : 'any gender', p.number === 'pl' ? 'plural' : 'singular'].join(', ')})`;
    });
  const classes = SEMANTIC_CLASSES.filter((c) => c !== 'function')
    .map((c) => /** @type {[string, string[]]} */ ([c, t.filter((x) => x.cls === c).map((x) => x.text)])).filter(([, words]) => words.length)
    .map(([c, words]) => `${c}: ${words.join(', ')}`);
  return `The tagger's parse, a guess, which the token features are built from. ${[
    `Subjects: ${subjects.join('; ') || 'none found'}.`,
    `Modifiers: ${modifiers.join('; ') || 'none'}.`,
    `Third-person pronouns: ${pronouns.join('; ') || 'none'}.`,
    `Classes: ${classes.join('; ')}.`,
    ...parseLimits(t).map((l) => l.text),
  ].join(' ')}`;
}

/** The token whose numbers the W_O view shows first: a pronoun, else a verb, else the last word. @param {import('./tokens.js').Token[]} tokens */
function focusToken(tokens) {
  const pronoun = tokens.findIndex((t) => t.pronoun && t.pronoun.person === 3);
  if (pronoun >= 0) return pronoun;
  const verb = tokens.findIndex((t) => t.pos === 'VERB');
  return verb >= 0 ? verb : tokens.length - 1;
}

export class TokenFeatureSource {
  /** @param {{ config: AttentionConfig }} o  the MultiHeadAttention config (self-attention, embedDim = the input width) */
  constructor({ config }) {
    /** @type {AnyMhaModule | null} */
    this.mha = null;
    /** @type {AttentionConfig} */
    this.config = { ...config };
    /** "designed heads", set by each source. */
    this.name = '';
    /** @type {AnyAttention | null} */
    this.attention = null;
    this.numLayers = 1;
    this.layer = 0;
    this.causal = false;
    this.maxTokens = MAX_TOKENS;
    /** @type {import('../lib/index.js').Tensor | null} */
    this.outProjection = null;
    /** The lesson's example sentences; a typed one is tagged without the core. @type {'lesson'} */
    this.sentenceSet = 'lesson';
    /** One attention layer: its forward pass can run in a Web Worker. */
    this.runsInWorker = true;
  }

  get numHeads() { return this.config.numHeads; }
  get embedDim() { return this.config.embedDim; }

  /** The loaded weights; throws before load. */
  get loaded() {
    const { attention, mha } = this;
    if (!attention || !mha) throw new Error(`${this.name} are not loaded`);
    return { attention, mha };
  }

  /** @param {AnyMhaModule} mha  the JS API module, direct (loadMha) or in a worker (createWorkerMha) */
  async load(mha) {
    this.dispose();
    this.mha = mha;
    this.outProjection = null;
    const attention = new mha.MultiHeadAttention(this.config);
    try {
      if ('ready' in attention) await attention.ready; // a worker's module is ready once created there
      await this.setWeights(attention);
    } catch (error) {
      await attention.dispose();
      throw error;
    }
    this.attention = attention;
    this.config = { ...this.config, ...attention.config };
  }

  /**
   * Load this source's weights into a new module (the constructor's seed: PyTorch's init).
   * @param {AnyAttention} _attention
   */
  async setWeights(_attention) {}

  examples() { return EXAMPLES; }

  /**
   * A typed text, or the index of an example sentence (needs no core: it may come before load).
   * @param {string | number} input
   * @returns {Promise<FeatureSentence>}
   */
  async sentence(input) {
    const example = typeof input === 'number' ? input : EXAMPLES.findIndex((e) => e.text === input);
    const text = typeof input === 'number' ? EXAMPLES[input].text : String(input).trim();
    if (!text) throw new Error('Type a sentence first.');
    const raw = await tagSentence(text);
    if (raw.length === 0) throw new Error('No tokens found in that text.');
    if (raw.length > this.maxTokens) throw tooManyTokens(raw.length, this.maxTokens);
    const tokens = withDisplay(analyseTokens(raw));
    return { text, example, tokens, summary: parseSummary(tokens), focus: focusToken(tokens), features: embedTokens(tokens) };
  }

  /**
   * @param {FeatureSentence} sentence
   * @param {{ parts?: boolean }} [options] parts: head outputs, concatenation and output too
   * @returns {Promise<import('./source.js').HeadResult>}
   */
  async compute(sentence, { parts = true } = {}) {
    const { attention, mha } = this.loaded;
    const L = sentence.tokens.length;
    const E = this.embedDim;
    const forward = await attention.forward({
      query: { data: projectFeatures(sentence.features, L, E), shape: [L, E] },
      needWeights: true, averageAttnWeights: false, returnHeadOutputs: parts, returnConcat: parts,
    });
    const weights = /** @type {import('../lib/index.js').Tensor} */ (forward.weights); // needWeights
    const { stats, similarity } = await analyseHeads(mha, weights);
    return {
      weights, stats, similarity,
      headOutputs: forward.headOutputs ?? null, concat: forward.concat ?? null, output: parts ? forward.output : null,
    };
  }

  /**
   * How far each token's output moves with `heads` switched off (zeroed before W_O).
   * @param {FeatureSentence} sentence
   * @param {number[]} heads
   */
  async ablation(sentence, heads) {
    const { attention } = this.loaded;
    const L = sentence.tokens.length;
    const E = this.embedDim;
    const query = { data: projectFeatures(sentence.features, L, E), shape: [L, E] };
    const base = (await attention.forward({ query, needWeights: false })).output.data;
    const ablated = (await attention.forward({ query, needWeights: false, ablateHeads: heads })).output.data;
    return { rows: tokenDifferences(base, ablated, L, E), what: 'output' };
  }

  /** out_proj.weight (E, E), read back from the core once per set of weights. */
  async outProjectionWeight() {
    if (!this.outProjection) this.outProjection = await this.loaded.attention.getParameter('out_proj.weight');
    return this.outProjection;
  }

  /**
   * The head's rows of W_Q, W_K and W_V (hd × E each) as [name, rows] blocks.
   * @param {number} h
   * @returns {Promise<[string, Float32Array][]>}
   */
  async headWeightRows(h) {
    const { attention } = this.loaded;
    const E = this.embedDim;
    const H = this.numHeads;
    const hd = E / H;
    const kvHeads = this.config.numKvHeads ?? H;
    const kvHead = Math.floor(h / (H / kvHeads));
    const names = await attention.parameterNames();
    if (names.includes('in_proj_weight')) {
      const inProj = await attention.getParameter('in_proj_weight');
      const rows = (/** @type {number} */ offset) => inProj.data.subarray(offset * E, (offset + hd) * E);
      return [['W_Q', rows(h * hd)], ['W_K', rows(H * hd + kvHead * hd)], ['W_V', rows(H * hd + kvHeads * hd + kvHead * hd)]];
    }
    // separate projections (grouped-query attention): K and V rows of the head's KV group
    const rows = async (/** @type {string} */ name, /** @type {number} */ head) => (await attention.getParameter(name)).data.subarray(head * hd * E, (head + 1) * hd * E);
    return [['W_Q', await rows('q_proj_weight', h)], ['W_K', await rows('k_proj_weight', kvHead)], ['W_V', await rows('v_proj_weight', kvHead)]];
  }

  /** @param {number} h */
  title(h) { return `Head ${h + 1}`; }

  /**
   * @param {number} h
   * @param {HeadStatistics} s
   * @param {FeatureSentence} [_sentence]  the sentence shown (a source that reads its map says what it does there)
   * @param {Float32Array} [_map]  the head's (L, L) map on it
   * @returns {{ focus: string, typical?: string, how?: string }}
   */
  describe(h, s, _sentence, _map) {
    return {
      focus: `This head focuses on ${describeByStatistics(s)}.`,
      typical: 'Typical function: in trained models, heads specialise during training (previous-token, syntactic, coreference and sink heads are all found in BERT and GPT-2); what these weights were shaped for is not known here, so their function is read from the statistics above.',
    };
  }

  /**
   * @param {number} _h
   * @param {Float32Array} _map
   * @param {FeatureSentence} _sentence
   * @param {HeadStatistics} _stats
   * @returns {{ holds: boolean | null, text: string }}
   */
  check(_h, _map, _sentence, _stats) {
    return { holds: null, text: 'Only the designed heads carry labels to check.' };
  }

  dispose() {
    const attention = this.attention;
    this.attention = null;
    if (attention) Promise.resolve(attention.dispose()).catch(() => {});
  }
}
