// The designed heads: eight heads of nn.MultiheadAttention(64, 8) whose W_Q, W_K and W_V are
// written down by hand (designed-heads.js) so that each carries out one relation; each head's
// label is checked on the sentence shown (label-checks.js).
import { TokenFeatureSource } from './token-features.js';
import { designedStateDict, HEADS, NUM_HEADS } from './designed-heads.js';
import { D_MODEL } from './embeddings.js';
import { checkHeadLabel } from './label-checks.js';

export class DesignedSource extends TokenFeatureSource {
  constructor() {
    super({ config: { embedDim: D_MODEL, numHeads: NUM_HEADS } });
    /** @type {'designed'} */
    this.id = 'designed';
    this.name = 'designed heads';
  }

  /** @param {import('./source.js').AnyAttention} attention */
  async setWeights(attention) {
    await attention.loadStateDict(designedStateDict());
  }

  /** @param {number} h */
  title(h) { return `Head ${h + 1} – ${HEADS[h].name}`; }
  /** @param {number} h */
  short(h) { return HEADS[h].short; }

  /** @param {number} h */
  describe(h) {
    return { focus: `This head focuses on ${HEADS[h].focus}`, typical: `Typical function: ${HEADS[h].typical}`, how: HEADS[h].how };
  }

  /**
   * @param {number} h
   * @param {Float32Array} map
   * @param {import('./token-features.js').FeatureSentence} sentence
   * @param {import('../lib/index.js').HeadStatistics} stats
   */
  check(h, map, sentence, stats) {
    const verdict = checkHeadLabel(h, map, sentence.tokens, stats);
    return { holds: verdict.holds, text: verdict.summary };
  }

  note() {
    return 'Each head\'s W_Q, W_K and W_V are written down by hand so that it carries out one relation (see “How its weights do it”). W_O gives every head its own 8 dimensions of the output.';
  }

  woNote() {
    return 'The designed W_O is the identity: each head writes into its own 8 numbers of the output, as in compiled transformers. Trained models mix the heads here.';
  }
}
