// The small transformer trained on the grammar of cpp/src/train (2 layers x 8 heads, d_model 64,
// context 32), shipped as weights/trained-seed1.bin. Its attention maps come from the training
// WebAssembly module through web/lib/train.js; their statistics from the main core. Head names
// come from the one rule of web/roles/evaluate.js (every source with learned heads), on the
// grammar's sentences: the table `npm run roles -- --source trained --write` measured
// (web/data/roles/trained-roles.json, read once a page), or measured again in a Web Worker on demand.
import { loadOnce } from '../lib/load-once.js';
import { loadTrainer, RELATIONS } from '../lib/train.js';
import { grammarSentence, trainedTable, TRAINED_HELD_OUT, TRAINED_ROLES_URL } from '../roles/measure.js';
import { inRolesWorker, workerRefused } from '../roles/measure-worker.js';
import { measureHead } from '../roles/evaluate.js';
import { labelName } from '../roles/vocabulary.js';
import { evidenceText } from '../roles/table.js';
import { analyseHeads } from './source.js';
import { describeByStatistics } from './describe.js';

/** @typedef {import('../lib/train.js').Trainer} Trainer */
/** @typedef {import('../lib/train.js').GrammarSentence} GrammarSentence */
/** The core's mean weights on held-out sentences (Trainer.evaluate), as the table holds them. @typedef {NonNullable<HeadRoles['heldOut']>} Evaluation */
/** @typedef {import('./source.js').HeadRoles} HeadRoles */
/**
 * A sentence of the grammar as the views show it, with the model's maps of every layer.
 * @typedef {import('./source.js').Sentence & { grammar: GrammarSentence, maps: import('../lib/index.js').Tensor }} TrainedSentence
 */

// '../sources/' holds from this file and from the embed bundle in web/lib/
export const TRAINED_WEIGHTS = new URL('../sources/weights/trained-seed1.bin', import.meta.url);
/** Sentences of the grammar offered as examples (each from its own seed): "because" (5, 7),
 * "so" (12, 14) and a reflexive object (1, 17); tests/golden/train/sentences.txt lists them. */
export const EXAMPLE_SEEDS = [5, 12, 1, 7, 14, 17];

/** @type {Record<string, string>} */
const RELATION_NAMES = {
  previous: 'previous token',
  verbSubject: labelName('verbSubject'),
  pronounAntecedent: labelName('pronounAntecedent'),
  nounModifier: labelName('nounModifier'),
  induction: labelName('induction'),
};

// The token strip's tag for each of the grammar's word categories (Trainer.categories, read from
// the core: the words are classed once, in grammar.cpp). Display only, not computation.
/** @type {Record<string, string>} */
const CATEGORY_TAG = {
  special: 'BOS', determiner: 'DET', adjective: 'ADJ', noun: 'NOUN', verb: 'VERB', preposition: 'PREP',
  relativizer: 'REL', connective: 'CONJ', pronoun: 'PRON', copula: 'AUX', state: 'ADJ', end: 'PUNCT', again: 'MARK',
  time: 'TIME', reflexive: 'PRON',
};

/** The words of free text as the grammar's parser splits them (lower case, "." its own word). @param {string} text */
export function splitWords(text) {
  return text.toLowerCase().replace(/\./g, ' . ').split(/\s+/).filter(Boolean);
}

/** A head's entry in a roles result (evaluate.js): its label and figures. @param {HeadRoles} roles @param {number} layer @param {number} head */
export function ruleHead(roles, layer, head) {
  return roles.heads.find((e) => e.layer === layer && e.head === head);
}

export { evidenceText };

/** @param {URL} url @param {string} what */
async function fetched(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The trained model's ${what} could not be loaded from ${url.pathname}: HTTP ${response.status}.`);
  return response;
}

// One training module and one table for every TrainedSource of the page.
const loadShared = loadOnce(async () => {
  const [trainer, weights, roles] = await Promise.all([
    loadTrainer({ seed: 1, heldOut: TRAINED_HELD_OUT }),
    fetched(TRAINED_WEIGHTS, 'weights').then((r) => r.arrayBuffer()),
    fetched(TRAINED_ROLES_URL, 'heads\' table (npm run roles -- --source trained --write writes it)').then((r) => /** @type {Promise<HeadRoles>} */ (r.json())),
  ]);
  trainer.loadWeights(new Uint8Array(weights));
  if (!roles.heldOut) throw new Error(`The trained model's heads' table ${TRAINED_ROLES_URL.pathname} has no held-out mean weights: write it again with npm run roles -- --source trained --write.`);
  return { trainer, evaluation: roles.heldOut, roles };
});

/**
 * The trained model's table measured again from its weights file, by the code that wrote the
 * shipped one: in a Web Worker, or here where none can start.
 * @param {import('./source.js').MeasureProgress} [onProgress]
 * @returns {Promise<HeadRoles>}
 */
export async function measureTrained(onProgress) {
  try {
    return await inRolesWorker('trained', [TRAINED_WEIGHTS.href], onProgress);
  } catch (error) {
    if (!workerRefused(error)) throw error;
  }
  const trainer = await loadTrainer({ seed: 1, heldOut: TRAINED_HELD_OUT });
  try {
    trainer.loadWeights(new Uint8Array(await (await fetched(TRAINED_WEIGHTS, 'weights')).arrayBuffer()));
    return await trainedTable(trainer, { onProgress });
  } finally {
    trainer.dispose();
  }
}

export class TrainedSource {
  /** @param {{ layer?: number }} [o] */
  constructor({ layer = 0 } = {}) {
    /** @type {'trained'} */
    this.id = 'trained';
    this.name = 'the trained model';
    /** @type {import('./source.js').AnyMhaModule | null} */
    this.mha = null;
    /** @type {Trainer | null} */
    this.trainer = null;
    /** @type {Evaluation | null} */
    this.evaluation = null;
    /** @type {HeadRoles | null} */
    this.roles = null;
    /** @type {Set<string>} */
    this.vocabulary = new Set();
    /** @type {string[]} */
    this.categories = [];
    this.layer = layer;
    this.causal = true;
    /** Its own sentences, of the grammar it was trained on. @type {'grammar'} */
    this.sentenceSet = 'grammar';
    this.runsInWorker = false;
  }

  /** What loading it does, while it loads. */
  loadingNote() {
    return 'Loading the trained model (its weights, the training module and its heads\' table)…';
  }

  get numHeads() { return this.trainer ? this.trainer.numHeads : 8; }
  get numLayers() { return this.trainer ? this.trainer.numLayers : 2; }
  get maxTokens() { return this.trainer ? this.trainer.context : 32; }
  /** d_model of the trained model (the core's decoder, cpp/include/mha/train). */
  get embedDim() { return 64; }

  /** The loaded model, its measurements and the core; throws before load. */
  get loaded() {
    const { trainer, evaluation, roles, mha } = this;
    if (!trainer || !evaluation || !roles || !mha) throw new Error('the trained model is not loaded');
    return { trainer, evaluation, roles, mha };
  }

  /** Load the training module and the shipped weights, and measure every head (once a page).
   *  @param {import('./source.js').AnyMhaModule} mha  the main core's JS API, for the statistics */
  async load(mha) {
    this.mha = mha;
    const { trainer, evaluation, roles } = await loadShared();
    this.trainer = trainer;
    this.evaluation = evaluation;
    this.roles = roles;
    this.vocabulary = new Set(trainer.vocabulary.filter((w) => !w.startsWith('<')));
    this.categories = trainer.categories;
  }

  /** Measure every head again, by the code `npm run roles` ran, off the page's thread; with onProgress({ done, total }). */
  /** @param {import('./source.js').MeasureProgress} [onProgress] */
  remeasure(onProgress) {
    return measureTrained(onProgress);
  }

  examples() {
    const { trainer } = this.loaded;
    return EXAMPLE_SEEDS.map((seed) => ({ seed, text: sentenceText(trainer.sentence(seed)), shows: `a sentence of the grammar (seed ${seed}) with its ground-truth links` }));
  }

  /**
   * An example (by index) or free text in the grammar's vocabulary; throws naming every unknown word.
   * @param {string | number} input
   * @returns {Promise<TrainedSentence>}
   */
  async sentence(input) {
    const { trainer } = this.loaded;
    let grammar;
    let example = -1;
    if (typeof input === 'number') {
      example = input;
      grammar = trainer.sentence(EXAMPLE_SEEDS[input]);
    } else {
      const words = splitWords(input);
      if (!words.length) throw new Error('Type a sentence first.');
      const unknown = [...new Set(words.filter((w) => !this.vocabulary.has(w)))];
      if (unknown.length) {
        throw new Error(`Not in the trained model's vocabulary: ${unknown.map((w) => `“${w}”`).join(', ')} ` +
          `(${unknown.length} of ${words.length} words unknown). It knows only these ${this.vocabulary.size} words: ${[...this.vocabulary].join(' ')}.`);
      }
      const max = trainer.context - 1;
      if (words.length > max) throw new Error(`That sentence has ${words.length} words; the trained model's context holds ${max} after <bos>. Remove ${words.length - max}.`);
      grammar = trainer.parse(input);
    }
    const tokens = grammar.words.map((text, i) => ({ text, tag: CATEGORY_TAG[this.categories[grammar.tokens[i]]] ?? 'WORD' }));
    return { text: sentenceText(grammar), example, tokens, grammar, summary: this.linksText(grammar), focus: tokens.length - 1, maps: trainer.attention(grammar) };
  }

  /** @param {import('./source.js').Sentence} sentence */
  sentenceNote(sentence) {
    return sentence.example >= 0
      ? `Shows ${this.examples()[sentence.example].shows}. <bos> is the start token the model always sees first.`
      : `Your sentence: ${sentence.tokens.length - 1} words after <bos>, all in the trained model's vocabulary.`;
  }

  woMissing() {
    return `The trained model has ${this.numLayers} layers, each with its own W_O mixing its ${this.numHeads} heads into d_model = ${this.embedDim}, followed by an MLP; its head outputs are not exposed to this view. The W_O step is drawn for the designed, random and loaded sources.`;
  }

  /** What the free-text box says while this source is shown. */
  textHelp() {
    return {
      help: `Trained source: type a sentence in the grammar's words (${this.vocabulary.size} words, e.g. “each man likes these women so they are late.”); unknown words are named.`,
      placeholder: 'e.g. each man likes these women so they are late .',
    };
  }

  /** @param {TrainedSentence} sentence */
  async compute(sentence) {
    const [, H, T] = sentence.maps.shape;
    const size = H * T * T;
    const layers = Array.from({ length: this.numLayers }, (_, l) => ({ data: sentence.maps.data.slice(l * size, (l + 1) * size), shape: [H, T, T] }));
    const weights = layers[this.layer];
    return { weights, layers, ...(await analyseHeads(this.loaded.mha, weights)) };
  }

  /** Head h's entry in the rule's table (web/roles/evaluate.js): label and figures. @param {number} h @param {number} [layer] */
  head(h, layer = this.layer) {
    const entry = ruleHead(this.loaded.roles, layer, h);
    if (!entry) throw new Error(`the trained model has no head ${h + 1} in layer ${layer}`);
    return entry;
  }

  /** @param {number} h */
  title(h) { return `Head ${h + 1} – ${labelName(this.head(h).label)}`; }
  /** @param {number} h */
  short(h) { return labelName(this.head(h).label); }

  /** @param {number} h @param {import('../lib/index.js').HeadStatistics} s */
  describe(h, s) {
    const { roles } = this.loaded;
    const e = this.head(h);
    return {
      focus: `This head (layer ${this.layer}) focuses on ${describeByStatistics(s)}. On held-out sentences its mean weight on each relation's true target: ${this.scoresText(h)}.`,
      typical: e.kind === 'role' || e.kind === 'relation'
        ? `Typical function: ${evidenceText(e, roles.rule)}, on the test half of ${roles.corpus.sentences} sentences of the grammar. Such heads are found in trained models such as GPT-2 (previous-token, induction and coreference heads).`
        : `Typical function: ${evidenceText(e, roles.rule)} on the test half of the grammar's sentences; it may still help the model in ways these relations do not capture.`,
    };
  }

  /** "Layer 0: H4 previous piece (…); the other 7 heads broad or mixed." */
  layerSummary() {
    const { roles } = this.loaded;
    const H = this.numHeads;
    /** @type {string[]} */
    const named = [];
    for (let h = 0; h < H; h += 1) {
      const e = this.head(h);
      if (e.kind === 'role' || e.kind === 'relation') named.push(`H${h + 1} ${evidenceText(e, roles.rule)}`);
    }
    const rest = H - named.length;
    const specialised = named.length ? `${named.length} of ${H} heads named: ${named.join('; ')}` : `none of its ${H} heads clears a bar`;
    return `Layer ${this.layer}: ${specialised}.${rest && named.length ? ` The other ${rest} are broad or mixed.` : ''}`;
  }

  note() {
    return `A ${this.numLayers}-layer, ${this.numHeads}-head transformer (d_model ${this.embedDim}, context ${this.maxTokens}) trained by the core on the grammar (npm run train -- --seed 1, float16 weights). ${this.layerSummary()} A head is named only where the low end of its 95% interval (test half of ${this.loaded.roles.corpus.sentences} sentences) beats the strongest baseline, or clears a role's threshold.`;
  }

  /** The core's mean weights of head h on every relation, best first. @param {number} h */
  scoresText(h) {
    const scores = this.loaded.evaluation.heads.filter((s) => s.layer === this.layer && s.head === h);
    return [...scores].sort((a, b) => b.meanWeight - a.meanWeight)
      .map((s) => `${RELATION_NAMES[s.relation]} ${s.meanWeight.toFixed(2)}`).join(', ');
  }

  /**
   * On the sentence shown: whether the head's pick (or share) holds here too.
   * @param {number} h
   * @param {Float32Array} map
   * @param {TrainedSentence} sentence
   */
  check(h, map, sentence) {
    const { roles } = this.loaded;
    const e = this.head(h);
    if (e.kind !== 'role' && e.kind !== 'relation') return { holds: null, text: `Not named: ${evidenceText(e, roles.rule)}.` };
    const s = grammarSentence(sentence.grammar, this.categories, 0);
    const m = measureHead(map, s, true);
    if (e.kind === 'role') {
      const r = m.roles[e.label];
      if (!r || !r[1]) return { holds: null, text: `This sentence has no rows where ${labelName(e.label)} applies.` };
      const share = r[0] / r[1];
      const bar = roles.rule.roles[e.label].threshold;
      return { holds: share >= bar, text: `mean share ${share.toFixed(2)} on ${labelName(e.label)} over this sentence's ${r[1]} rows (threshold ${bar.toFixed(2)})` };
    }
    const mine = s.instances.map((inst, k) => ({ inst, k })).filter((x) => x.inst.relation === e.label);
    if (!mine.length) return { holds: null, text: `This sentence has no ${labelName(e.label)} links to check (typed sentences carry only previous-token links).` };
    const hits = mine.filter((x) => x.inst.keys.includes(m.chosen[x.k])).length;
    return {
      holds: hits / mine.length > e.relations[e.label].baseline.score,
      text: `its largest weight is on the right word for ${hits} of this sentence's ${mine.length} ${labelName(e.label)} link${mine.length > 1 ? 's' : ''} (test half: ${e.relations[e.label].score.toFixed(2)}; strongest baseline ${e.relations[e.label].baseline.score.toFixed(2)})`,
    };
  }

  /** The grammar's links in a sentence, in words. @param {GrammarSentence} grammar */
  linksText(grammar) {
    const w = grammar.words;
    const by = (/** @type {string} */ relation) => grammar.links.filter((l) => l.relation === relation).map((l) => `${w[l.query]}(${l.query}) → ${w[l.key]}(${l.key})`);
    const parts = RELATIONS.filter((r) => r !== 'previous').map((r) => /** @type {[string, string[]]} */ ([r, by(r)])).filter(([, links]) => links.length)
      .map(([r, links]) => `${RELATION_NAMES[r]}: ${links.join(', ')}`);
    return parts.length
      ? `The grammar's ground-truth links in this sentence (token positions in brackets). ${parts.join('. ')}.`
      : 'A typed sentence carries only its previous-token links; the grammar\'s other links are known only for its own sentences.';
  }

  dispose() {}
}

/** @param {{ words: string[] }} sentence */
export function sentenceText(sentence) {
  return sentence.words.filter((w) => w !== '<bos>').join(' ');
}
