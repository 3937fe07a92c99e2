// The designed heads: eight heads of nn.MultiheadAttention(64, 8) whose W_Q, W_K and W_V are
// written down by hand (designed-heads.js) so that each carries out one relation; each head's
// label is checked on the sentence shown (label-checks.js).
import { TokenFeatureSource } from './token-features.js';
import { designedStateDict, HEADS, NUM_HEADS } from './designed-heads.js';
import { D_MODEL } from './embeddings.js';
import { checkHeadLabel, parseTargets } from './label-checks.js';
import { parseLimits } from './parse-limits.js';
import { PARSE_AGREEMENT } from './parse-agreement.js';

const pct = (/** @type {{ right: number, total: number }} */ c) => `${Math.round((100 * c.right) / c.total)}%`;
const of = (/** @type {{ right: number, total: number }} */ c) => `(${c.right} of ${c.total})`;

/**
 * How far the tagger's parse is to be trusted for what a head follows, from its agreement with
 * the hand annotation (parse-agreement.js), by head (0-based); the class head's classes are not
 * annotated.
 * @type {Record<number, string>}
 */
const PARSE_RECORD = {
  2: 'The classes come from the tagger\'s tags and the page\'s word lists; no annotation checks them.',
  3: `On ${PARSE_AGREEMENT.sentences} hand-annotated English sentences the parse gives the annotated subject for ${pct(PARSE_AGREEMENT.verbSubject)} of verbs ${of(PARSE_AGREEMENT.verbSubject)}.`,
  4: `On ${PARSE_AGREEMENT.sentences} hand-annotated English sentences the annotated antecedent is among the nouns the parse finds agreeing for ${pct(PARSE_AGREEMENT.pronounAgreement)} of pronouns ${of(PARSE_AGREEMENT.pronounAgreement)}.`,
  5: `On ${PARSE_AGREEMENT.sentences} hand-annotated English sentences the parse gives the annotated noun for ${pct(PARSE_AGREEMENT.modifierNoun)} of determiners, adjectives and possessives ${of(PARSE_AGREEMENT.modifierNoun)}.`,
};

/** What the parse found none of, where a head has no row to check (by head, 0-based). @type {Record<number, string>} */
const NOTHING_FOUND = {
  2: 'no word with a class',
  3: 'no verb with a subject',
  4: 'no third-person pronoun with a noun that agrees with it',
  5: 'no determiner, adjective or possessive with a noun',
};

/** Most of a parse's guesses shown at once (the rest are in the parse summary under the tokens). */
const GUESSES_SHOWN = 12;

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

  /**
   * The design in words, and what its map does on this sentence where the design leaves a row
   * with nothing to find (read from the map, so that it is true of the map shown).
   * @param {number} h
   * @param {import('../lib/index.js').HeadStatistics} _s
   * @param {import('./token-features.js').FeatureSentence} sentence
   * @param {Float32Array} map
   */
  describe(h, _s, sentence, map) {
    const here = rowsWithNothingToFind(h, map, sentence.tokens);
    return { focus: `This head focuses on ${HEADS[h].focus}${here ? ` ${here}` : ''}`, typical: `Typical function: ${HEADS[h].typical}`, how: HEADS[h].how };
  }

  /**
   * @param {number} h
   * @param {Float32Array} map
   * @param {import('./token-features.js').FeatureSentence} sentence
   * @param {import('../lib/index.js').HeadStatistics} stats
   */
  check(h, map, sentence, stats) {
    const verdict = checkHeadLabel(h, map, sentence.tokens, stats);
    if (verdict.basis !== 'parse') return { holds: verdict.holds, text: verdict.summary };
    const shown = verdict.guess.slice(0, GUESSES_SHOWN).join('; ');
    const more = verdict.guess.length > GUESSES_SHOWN ? ` … (${verdict.guess.length - GUESSES_SHOWN} more)` : '';
    return {
      holds: verdict.holds,
      followsParse: true,
      title: 'Does it follow the tagger\'s parse here?',
      text: verdict.holds === null ? `Nothing to check: the tagger's parse found ${NOTHING_FOUND[h]} in this sentence` : verdict.summary,
      guess: verdict.guess.length ? `The tagger's guess, which this head's features were built from: ${shown}${more}.` : '',
      limits: parseLimits(sentence.tokens).map((l) => l.text),
      note: `This compares the head with the parse its own features come from: it shows the weights carry out the parse, not that the parse is right. ${PARSE_RECORD[h]}`,
    };
  }

  note() {
    return 'Each head\'s W_Q, W_K and W_V are written down by hand so that it carries out one relation (see “How its weights do it”). W_O gives every head its own 8 dimensions of the output.';
  }

  woNote() {
    return 'The designed W_O is the identity: each head writes into its own 8 numbers of the output, as in compiled transformers. Trained models mix the heads here.';
  }
}

const weight = (/** @type {number} */ x) => x.toFixed(2);

/**
 * Where a designed head's rule gives a row nothing to find, what its row does on this sentence:
 * the first token's row in the previous-token head, the last token's in the next-token head, and
 * the rows the parse gives no target in heads 4 to 6 (they fall back on the first token).
 * @param {number} h
 * @param {Float32Array} map  (L, L)
 * @param {import('./tokens.js').Token[]} tokens
 */
function rowsWithNothingToFind(h, map, tokens) {
  const L = tokens.length;
  const largest = (/** @type {number} */ row) => {
    let best = 0;
    for (let j = 1; j < L; j += 1) if (map[row * L + j] > map[row * L + best]) best = j;
    return `its largest weight, ${weight(map[row * L + best])}, is on “${tokens[best].text}”`;
  };
  if (h === 0) return L > 1 ? `The first token has no previous token: on this sentence ${largest(0)}.` : '';
  if (h === 1) return L > 1 ? `The last token has no next token: on this sentence ${largest(L - 1)}.` : '';
  if (h < 3 || h > 5) return '';
  const found = new Set(parseTargets(h, tokens).map((r) => r.row));
  const rest = tokens.map((_, i) => i).filter((i) => !found.has(i));
  if (!rest.length) return '';
  const onFirst = rest.map((i) => map[i * L]);
  const low = weight(Math.min(...onFirst));
  const high = weight(Math.max(...onFirst));
  const one = rest.length === 1;
  return `On this sentence, the ${one ? 'row' : `${rest.length} rows`} the parse gives nothing to find fall${one ? 's' : ''} back on the first token, with ${low === high ? low : `${low} to ${high}`} of ${one ? 'its' : 'their'} weight.`;
}
