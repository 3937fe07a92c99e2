// The sentences heads are measured on, as evaluate.js takes them: the hand-annotated data of
// web/data/roles/ (pronouns.json, relations.json), or JSON lines {"text", "pronoun",
// "antecedent"} of a corpus file; each set on the model's own tokens.
import { wordTexts } from './evaluate.js';

/** @typedef {import('./evaluate.js').Sentence} Sentence */
/** An annotated sentence before it is set on a model's tokens. @typedef {Omit<Sentence, 'tokens' | 'tokenWord'>} DataSentence */
/**
 * pronouns.json: items with a pronoun (word index), its antecedent and each noun's [gender, number].
 * @typedef {{ items: { id: string, split: 'dev' | 'test', text: string, words: string[], pos: string[], pronoun: number,
 *                      antecedent: number, nouns: Record<string, [string, string]> }[] }} PronounData
 */
/**
 * relations.json: sentences with their relations as [relation, query word, key word].
 * @typedef {{ sentences: { id: string, split: 'dev' | 'test', text: string, words: string[], pos: string[],
 *                          relations: [string, number, number][] }[] }} RelationData
 */
/** A corpus file's line. @typedef {{ line: number, text: string, pronoun: string, antecedent: string }} CorpusItem */
/**
 * A text on the model's tokens: its pieces and the word of each, as the encoder's tokenizer
 * groups them (web/lib/encoder.js tokenize/encode: `pieces`, `words`).
 * @typedef {Pick<import('../lib/encoder.js').Tokens, 'pieces' | 'words'>} Pieces
 */

const NOMINAL = new Set(['NOUN', 'PROPN']);
const PUNCTUATION = /[\p{P}\p{S}]/gu;
const bare = (/** @type {string} */ word) => word.toLowerCase().replace(PUNCTUATION, '');

/** Gender and number agreement of a personal pronoun with a noun's [gender, number] (README.md). @param {string} pronoun @param {[string, string]} noun */
export function agrees(pronoun, [gender, number]) {
  const p = pronoun.toLowerCase();
  if (p === 'they' || p === 'them') return number === 'pl';
  if (number !== 'sg') return false;
  if (p === 'he' || p === 'him') return gender === 'm' || gender === 'mf';
  if (p === 'she' || p === 'her') return gender === 'f' || gender === 'mf';
  if (p === 'it') return gender === 'n';
  return false;
}

/**
 * The annotated sentences, each with its split: pronoun items carry pronounAntecedent (with the
 * nouns before the pronoun that agree with it), relation sentences their six relations and their
 * verbs' subjects. Words only; tokens are added by onTokens.
 * @param {PronounData} pronouns
 * @param {RelationData} relations
 */
export function dataSentences(pronouns, relations) {
  /** @type {DataSentence[]} */
  const out = [];
  for (const item of pronouns.items) {
    const agreeing = Object.entries(item.nouns).map(([w, f]) => /** @type {[number, [string, string]]} */ ([Number(w), f]))
      .filter(([w, f]) => w < item.pronoun && agrees(item.words[item.pronoun], f)).map(([w]) => w);
    out.push({
      id: item.id, split: item.split, text: item.text, words: item.words,
      nominal: item.pos.map((p) => NOMINAL.has(p)), subjects: null,
      instances: [{ relation: 'pronounAntecedent', query: item.pronoun, keys: [item.antecedent], agreeing }],
    });
  }
  for (const s of relations.sentences) {
    out.push({
      id: s.id, split: s.split, text: s.text, words: s.words,
      nominal: s.pos.map((p) => NOMINAL.has(p)),
      subjects: [...new Set(s.relations.filter(([r]) => r === 'verbSubject').map(([, , k]) => k))],
      instances: s.relations.map(([relation, query, key]) => ({ relation, query, keys: [key] })),
    });
  }
  return out;
}

/**
 * A sentence on the model's pieces: the pieces grouped into words (by the tokenizer) must give
 * the sentence's words (case aside). Returns the sentence with tokens and tokenWord, or null.
 * @param {DataSentence} sentence
 * @param {Pieces} tokens
 * @returns {Sentence | null}
 */
export function onPieces(sentence, { pieces, words: tokenWord }) {
  const texts = wordTexts(pieces, tokenWord);
  if (texts.length !== sentence.words.length || texts.some((t, i) => t.toLowerCase() !== sentence.words[i].toLowerCase())) return null;
  return { ...sentence, tokens: pieces, tokenWord };
}

/**
 * A corpus file's lines: JSON objects {"text", "pronoun", "antecedent"}. Throws naming the line,
 * what was expected and what came.
 * @param {string} contents
 * @param {string} [fileName]
 * @returns {CorpusItem[]}
 */
export function parseCorpus(contents, fileName = 'the corpus') {
  /** @type {CorpusItem[]} */
  const out = [];
  contents.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) return;
    const where = `${fileName} line ${i + 1}`;
    let value;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new Error(`${where}: expected a JSON object {"text", "pronoun", "antecedent"}, got ${JSON.stringify(line.slice(0, 80))} (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: expected a JSON object {"text", "pronoun", "antecedent"}, got ${JSON.stringify(value)}`);
    for (const key of ['text', 'pronoun', 'antecedent']) {
      if (typeof value[key] !== 'string' || !value[key].trim()) throw new Error(`${where}: expected "${key}" to be a non-empty string, got ${JSON.stringify(value[key])}`);
    }
    out.push({ line: i + 1, text: value.text, pronoun: value.pronoun, antecedent: value.antecedent });
  });
  if (!out.length) throw new Error(`${fileName}: expected JSON lines {"text", "pronoun", "antecedent"}, got no lines`);
  return out;
}

/**
 * A corpus line on the model's pieces: the antecedent is the first word equal to it (case and
 * punctuation aside), the pronoun its first occurrence after it. Nouns and agreement come from
 * the tagger's tokens (tokens.js analyseTokens) where given: a word is a noun when the token its
 * first character belongs to is, and agrees by the tagger's number and gender.
 * Lines alternate dev (odd line numbers) and test (even).
 * @param {CorpusItem} item
 * @param {Pieces} tokens
 * @param {import('../sources/tokens.js').Token[] | null} [tagged]
 * @returns {Sentence}
 */
export function corpusSentence(item, { pieces, words: tokenWord }, tagged = null) {
  const words = wordTexts(pieces, tokenWord);
  const where = `line ${item.line}`;
  const key = words.findIndex((w) => bare(w) === bare(item.antecedent));
  if (key < 0) throw new Error(`${where}: expected the antecedent "${item.antecedent}" to be a word of the text, got the words ${words.join(' ')}`);
  const query = words.findIndex((w, i) => i > key && bare(w) === bare(item.pronoun));
  if (query < 0) throw new Error(`${where}: expected the pronoun "${item.pronoun}" after the antecedent "${item.antecedent}", got the words ${words.join(' ')}`);
  const nominal = words.map(() => false);
  /** @type {number[] | undefined} */
  let agreeing;
  if (tagged) {
    const owner = tokenOwners(words, tagged);
    if (owner) {
      words.forEach((_, w) => { const t = tagged[owner[w]]; nominal[w] = !!t && NOMINAL.has(t.pos); });
      agreeing = words.flatMap((_, w) => (w < query && nominal[w] && taggedAgrees(item.pronoun, tagged[owner[w]]) ? [w] : []));
    }
  }
  return {
    id: `line ${item.line}`, split: /** @type {'dev' | 'test'} */ (item.line % 2 ? 'dev' : 'test'), text: item.text, words, tokens: pieces, tokenWord, nominal, subjects: null,
    instances: [{ relation: 'pronounAntecedent', query, keys: [key], ...(agreeing ? { agreeing } : {}) }],
  };
}

/**
 * Per word, the tagger token holding its first character (by walking both texts), or null.
 * @param {string[]} words
 * @param {{ text: string }[]} tagged
 */
function tokenOwners(words, tagged) {
  /** @type {number[]} */
  const chars = [];
  tagged.forEach((t, k) => { for (const c of t.text.replace(/\s+/g, '').toLowerCase()) chars.push(k); });
  /** @type {number[]} */
  const owner = [];
  let at = 0;
  for (const w of words) {
    owner.push(chars[at]);
    at += w.replace(/\s+/g, '').length;
  }
  return at === chars.length ? owner : null;
}

/** @param {string} pronoun @param {import('../sources/tokens.js').Token} token */
function taggedAgrees(pronoun, token) {
  const p = pronoun.toLowerCase();
  const number = token.number ?? 'sg';
  if (p === 'they' || p === 'them') return number === 'pl';
  if (number !== 'sg') return false;
  const g = token.gender ?? { m: 1, f: 1, n: 1 };
  if (p === 'he' || p === 'him') return g.m > 0;
  if (p === 'she' || p === 'her') return g.f > 0;
  if (p === 'it') return g.n > 0;
  return false;
}
