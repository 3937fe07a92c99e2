// The explorer's fourth source of heads: the small transformer trained on the grammar of
// cpp/src/train (2 layers x 8 heads, d_model 64, context 32), shipped as train/model-seed1.bin.
// Its attention maps come from the training WebAssembly module through web/lib/train.js; the
// explorer computes their statistics with the main core. Head names come from the measured
// heads x relations table on held-out sentences: a head is named by a relation only when its
// mean weight on the true target clears the core's label threshold, else it is "diffuse".
import { loadTrainer, RELATIONS } from '../lib/train.js';

export const TRAINED_WEIGHTS = new URL('./train/model-seed1.bin', import.meta.url);
/** Sentences of the grammar offered as examples (each from its own seed): "because" (5, 7),
 * "so" (12, 14) and a reflexive object (1, 17); tests/golden/train/sentences.txt lists them. */
export const EXAMPLE_SEEDS = [5, 12, 1, 7, 14, 17];
const HELD_OUT = 300; // the same held-out sentences as the train view's table

const RELATION_NAMES = {
  previous: 'previous token',
  verb_subject: 'verb → subject',
  pronoun_antecedent: 'pronoun → antecedent',
  modifier_noun: 'modifier ↔ noun',
  induction: 'induction',
};
const RELATION_SHORT = {
  previous: 'previous', verb_subject: 'verb→subj', pronoun_antecedent: 'pronoun→ant', modifier_noun: 'mod↔noun', induction: 'induction',
};

// The token strip's tag for each of the grammar's word categories (Trainer.categories, read from
// the core: the words are classed once, in grammar.cpp). Display only, not computation.
const CATEGORY_TAG = {
  special: 'BOS', determiner: 'DET', adjective: 'ADJ', noun: 'NOUN', verb: 'VERB', preposition: 'PREP',
  relativizer: 'REL', connective: 'CONJ', pronoun: 'PRON', copula: 'AUX', state: 'ADJ', end: 'PUNCT', again: 'MARK',
  time: 'TIME', reflexive: 'PRON',
};

/** The words of free text as the grammar's parser splits them (lower case, "." its own word). */
export function splitWords(text) {
  return text.toLowerCase().replace(/\./g, ' . ').split(/\s+/).filter(Boolean);
}

export class TrainedSource {
  constructor() {
    this.trainer = null;
    this.categories = [];
    this.evaluation = null;
    this.threshold = NaN;
    this.layer = 0;
    this.sentence = null;
    this.maps = null;
    this.example = 0;
    this.loading = null;
  }

  get ready() { return !!this.evaluation; }
  get numHeads() { return this.trainer ? this.trainer.numHeads : 8; }
  get numLayers() { return this.trainer ? this.trainer.numLayers : 2; }

  /** Load the training module, the shipped weights, and measure every head (once). */
  load() {
    if (!this.loading) {
      this.loading = (async () => {
        const trainer = await loadTrainer({ seed: 1, heldOut: HELD_OUT });
        const response = await fetch(TRAINED_WEIGHTS);
        if (!response.ok) throw new Error(`The trained weights could not be loaded from ${TRAINED_WEIGHTS.pathname}: HTTP ${response.status}.`);
        trainer.loadWeights(new Uint8Array(await response.arrayBuffer()));
        this.evaluation = trainer.evaluate();
        this.threshold = trainer.labelThreshold;
        this.trainer = trainer;
        this.vocabulary = new Set(trainer.vocabulary.filter((w) => !w.startsWith('<')));
        this.categories = trainer.categories;
      })().catch((error) => { this.loading = null; throw error; });
    }
    return this.loading;
  }

  examples() {
    return EXAMPLE_SEEDS.map((seed) => ({ seed, text: sentenceText(this.trainer.sentence(seed)) }));
  }

  selectExample(index) {
    this.example = index;
    this.#show(this.trainer.sentence(EXAMPLE_SEEDS[index]));
  }

  /** Free text in the grammar's vocabulary; throws naming every unknown word. */
  selectText(text) {
    const words = splitWords(text);
    if (!words.length) throw new Error('Type a sentence first.');
    const unknown = [...new Set(words.filter((w) => !this.vocabulary.has(w)))];
    if (unknown.length) {
      throw new Error(`Not in the trained model's vocabulary: ${unknown.map((w) => `“${w}”`).join(', ')} ` +
        `(${unknown.length} of ${words.length} words unknown). It knows only these ${this.vocabulary.size} words: ${[...this.vocabulary].join(' ')}.`);
    }
    const max = this.trainer.context - 1;
    if (words.length > max) throw new Error(`That sentence has ${words.length} words; the trained model's context holds ${max} after <bos>. Remove ${words.length - max}.`);
    this.example = -1;
    this.#show(this.trainer.parse(text));
  }

  #show(sentence) {
    this.maps = this.trainer.attention(sentence);
    this.sentence = sentence;
  }

  /** The selected layer's maps: { data: Float32Array (H*T*T), shape: [H, T, T] }. */
  layerWeights() {
    const [, H, T] = this.maps.shape;
    const size = H * T * T;
    return { data: this.maps.data.slice(this.layer * size, (this.layer + 1) * size), shape: [H, T, T] };
  }

  /** Token objects in the shape the explorer's token strip reads. */
  tokens() {
    return this.sentence.words.map((text, i) => {
      const pos = CATEGORY_TAG[this.categories[this.sentence.tokens[i]]] ?? 'WORD';
      return {
        text, pos, cls: 'function', number: null, gender: null, pronoun: null, chunk: -1, isHead: false,
        isSubject: false, subject: -1, modifies: -1,
      };
    });
  }

  sentenceText() { return sentenceText(this.sentence); }

  /** A head's scores on every relation (held-out sentences) and its name. */
  head(h, layer = this.layer) {
    const scores = this.evaluation.heads.filter((s) => s.layer === layer && s.head === h);
    const best = scores.reduce((a, b) => (b.meanWeight > a.meanWeight ? b : a));
    const specialised = best.meanWeight >= this.threshold;
    return {
      scores, best, specialised,
      short: specialised ? RELATION_SHORT[best.relation] : 'diffuse',
      name: specialised ? `${RELATION_NAMES[best.relation]} (${best.meanWeight.toFixed(2)})` : 'diffuse',
    };
  }

  /** "Layer 0: H6 specialised on …; the other 7 heads stayed diffuse." */
  layerSummary() {
    const H = this.numHeads;
    const named = [];
    for (let h = 0; h < H; h += 1) {
      const head = this.head(h);
      if (head.specialised) named.push(`H${h + 1} on ${RELATION_NAMES[head.best.relation]} (mean weight ${head.best.meanWeight.toFixed(2)} at the ${head.best.at.replace('_', ' ')}, argmax in ${Math.round(head.best.argmaxShare * 100)}% of positions)`);
    }
    const rest = H - named.length;
    const specialised = named.length ? `${named.length} of ${H} heads specialised: ${named.join('; ')}` : `none of its ${H} heads specialised`;
    return `Layer ${this.layer}: ${specialised}. ${rest ? `The other ${rest} stayed diffuse (no relation reaches ${this.threshold.toFixed(2)}).` : ''}`.trim();
  }

  /** The scores of head h as a sentence, best first. */
  scoresText(h) {
    const { scores } = this.head(h);
    return [...scores].sort((a, b) => b.meanWeight - a.meanWeight)
      .map((s) => `${RELATION_NAMES[s.relation]} ${s.meanWeight.toFixed(2)}`).join(', ');
  }

  /** On the sentence shown: the head's mean weight on the true targets of its relation. */
  checkOnSentence(h, map) {
    const head = this.head(h);
    const T = this.sentence.tokens.length;
    if (!head.specialised) return { holds: null, text: `Not labelled: its best relation on held-out sentences, ${RELATION_NAMES[head.best.relation]}, reaches ${head.best.meanWeight.toFixed(2)}, below the threshold ${this.threshold.toFixed(2)}.` };
    const relation = head.best.relation;
    // measured where the table measured it: at the link's query, or the token before it
    const shift = head.best.at === 'before_verb' || head.best.at === 'connective' ? 1 : 0;
    const links = this.sentence.links.filter((l) => l.relation === relation && l.query - shift > l.key);
    if (!links.length) return { holds: null, text: `This sentence has no ${RELATION_NAMES[relation]} links to check (typed sentences carry only previous-token links).` };
    let sum = 0;
    for (const l of links) sum += map[(l.query - shift) * T + l.key];
    const mean = sum / links.length;
    return {
      holds: mean >= this.threshold,
      text: `mean weight ${mean.toFixed(2)} on the true target over this sentence's ${links.length} ${RELATION_NAMES[relation]} link${links.length > 1 ? 's' : ''} (threshold ${this.threshold.toFixed(2)}; held-out ${head.best.meanWeight.toFixed(2)})`,
    };
  }

  /** The grammar's links in this sentence, in words. */
  linksText() {
    const w = this.sentence.words;
    const by = (relation) => this.sentence.links.filter((l) => l.relation === relation).map((l) => `${w[l.query]}(${l.query}) → ${w[l.key]}(${l.key})`);
    const parts = RELATIONS.filter((r) => r !== 'previous').map((r) => [r, by(r)]).filter(([, links]) => links.length)
      .map(([r, links]) => `${RELATION_NAMES[r]}: ${links.join(', ')}`);
    return parts.length
      ? `The grammar's ground-truth links in this sentence (token positions in brackets). ${parts.join('. ')}.`
      : 'A typed sentence carries only its previous-token links; the grammar\'s other links are known only for its own sentences.';
  }

  snapshot() {
    return { layer: this.layer, threshold: this.threshold, sentence: this.sentence && this.sentenceText(), words: this.sentence && [...this.sentence.words] };
  }
}

export function sentenceText(sentence) {
  return sentence.words.filter((w) => w !== '<bos>').join(' ');
}
