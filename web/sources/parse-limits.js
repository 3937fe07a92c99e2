// Where the tagger's parse is likely a poor guess: text outside what the compromise tagger reads.
// The tagger knows English only; it can tell the words it recognised from those it knew nothing
// of (it falls back on calling them nouns: tokens.js `unknown`); and its shallow parse was checked
// against hand annotation (parse-agreement.js) on sentences of a known length. Each limit is a
// test of the tokens alone. Its thresholds are set so that none of the hand-annotated English
// sentences trips one (tests/js/parse-limits.test.js measures that, and that German, French,
// Spanish and misspelled sentences do).
import { PARSE_AGREEMENT } from './parse-agreement.js';

/**
 * Common English function words. Every hand-annotated English sentence has at least one (the
 * fewest: 1 word in 11); a text of several words with none of them, whose words the tagger does
 * not know, is likely another language.
 */
export const ENGLISH_FUNCTION_WORDS = new Set((
  'the a an of to in on at by for with from into about as and or but because if that this these those ' +
  'is are was were be been being am has have had do does did will would can could should must may might ' +
  'not no it its he him his she her hers they them their we us our you your i me my who which what ' +
  'when where there here than then so very all some any each every other one')
  .split(' '));

/** A word of letters outside English's alphabet (ä, ß, é, ñ …), by the letters it has. */
const FOREIGN_LETTER = /(?![A-Za-z])\p{L}/gu;

export const LIMITS = {
  /** Words the tagger knew nothing of: at least this share of the words … */
  unknownShare: 0.25,
  /** … and at least this many (one unknown name in a short sentence is no sign). */
  unknownWords: 2,
  /** Words a text needs before having no common English word is a sign (headlines and short phrases do without). */
  functionWordsFrom: 6,
  /** The longest sentence the parse was checked against, in tokens. */
  longest: PARSE_AGREEMENT.longest,
};

/** @typedef {{ id: 'notEnglish' | 'unknownWords' | 'long', text: string }} ParseLimit */

const listed = (/** @type {string[]} */ words, max = 6) => (words.length > max ? `${words.slice(0, max).join(', ')} …` : words.join(', '));

/**
 * The limits a sentence's tokens fall outside, each with what it means, in words (none: the
 * text is the kind the tagger's parse was checked on).
 * @param {Pick<import('./tokens.js').Token, 'text' | 'isPunct' | 'unknown'>[]} tokens  analyseTokens' tokens
 * @returns {ParseLimit[]}
 */
export function parseLimits(tokens) {
  const words = tokens.filter((t) => !t.isPunct);
  /** @type {ParseLimit[]} */
  const out = [];
  const unknown = [...new Set(words.filter((t) => t.unknown).map((t) => t.text))];
  const unknownCount = words.filter((t) => t.unknown).length;
  const manyUnknown = unknownCount >= LIMITS.unknownWords && unknownCount >= LIMITS.unknownShare * words.length;
  if (manyUnknown) {
    const letters = [...new Set(words.flatMap((t) => t.text.match(FOREIGN_LETTER) ?? []))];
    const functionWords = words.filter((t) => ENGLISH_FUNCTION_WORDS.has(t.text.toLowerCase())).length;
    const signs = [
      ...(letters.length ? [`letters English does not use (${letters.join(', ')})`] : []),
      ...(functionWords === 0 && words.length >= LIMITS.functionWordsFrom ? ['none of the common English words (the, a, of, is …)'] : []),
    ];
    const guessed = `knew nothing of ${unknownCount} of its ${words.length} words (${listed(unknown)}) and guessed ${unknownCount > 1 ? 'they are nouns' : 'it is a noun'}`;
    if (signs.length) out.push({ id: 'notEnglish', text: `Likely not English: the tagger, which reads English only, ${guessed}; the text has ${signs.join(' and ')}.` });
    else out.push({ id: 'unknownWords', text: `Words the tagger does not know: it ${guessed}, so its parse here rests on guesses (misspelled, rare or not English?).` });
  }
  if (tokens.length > LIMITS.longest) {
    out.push({ id: 'long', text: `Long: ${tokens.length} tokens, more than any of the hand-annotated sentences the parse was checked against (at most ${LIMITS.longest}), so how well it parses this one is not known.` });
  }
  return out;
}
