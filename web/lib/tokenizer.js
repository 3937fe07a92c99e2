// A model's tokenizer: its tokenizer.json (and tokenizer_config.json, where there is one) read
// by Hugging Face's own tokenizer library, @huggingface/tokenizers, which copies what the Rust
// `tokenizers` does for every kind there is (byte-level BPE, WordPiece, SentencePiece's BPE with
// byte fallback, Unigram), normaliser, pre-tokeniser, model, post-processor and decoder. It is
// vendored as web/vendor/tokenizers.mjs (scripts/build/vendor.js) and loaded only with a model's
// tokenizer.json, so a page that opens no model never downloads it.
//
// This module is also the one place that says how pieces read: what each piece shows is what
// the tokenizer's own decoder makes of it, and where pieces split a character's bytes (Llama 2's
// byte fallback <0xF0> <0x9F> <0x8D> <0x95>, byte-level BPE's "ðŁ"), the character each helps
// spell; a piece whose decoded text begins with white space starts a word (GPT-2's "Ġ", SentencePiece's "▁", every WordPiece piece but a "##"
// continuation); punctuation and special tokens are words of their own. The token strip, the
// roles rule, the predictions and `npm run model` all read pieces through read().
//
//   const tokenizer = await loadTokenizer(tokenizerJsonText, tokenizerConfigText);
//   const ids = tokenizer.encode('The cat sat.');           // the post-processor's special tokens too
//   tokenizer.read(ids);   // { pieces, texts, words, marked, special }
import { MhaError } from './errors.js';

/** @typedef {import('./models.js').TokenizerInfo} TokenizerInfo */
/** @typedef {import('./models.js').TokenReading} TokenReading */
/** @typedef {typeof import('../vendor/tokenizers.mjs')} TokenizersLibrary */
/** @typedef {import('../vendor/tokenizers.mjs').Tokenizer} LibraryTokenizer */

/** @type {Promise<TokenizersLibrary> | null} */
let library = null;

/** The vendored library, imported once, on first use. @returns {Promise<TokenizersLibrary>} */
function tokenizersLibrary() {
  library ??= import('../vendor/tokenizers.mjs').catch((error) => {
    library = null;
    throw new MhaError('INVALID_ARGUMENT', `The tokenizer library (web/vendor/tokenizers.mjs; run "node scripts/build/vendor.js") could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  });
  return library;
}

/** @param {unknown} value */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/** @param {string} file @param {string} message */
const invalid = (file, message) => new MhaError('INVALID_CONFIG', `${file}: ${message}`);

/** @param {string} text @param {string} file @returns {any} */
function parseJson(text, file) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(file, `not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

const isId = (/** @type {unknown} */ v) => Number.isInteger(v) && /** @type {number} */ (v) >= 0;
const isObject = (/** @type {unknown} */ v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * What the library takes on trust and would read wrongly (a vocabulary entry that is not an
 * id, a merge that is not a pair) or fail on with a message that names no field: refused here,
 * naming the field, what was expected and what came.
 * @param {any} json
 * @param {string} file
 */
function checkTokenizerJson(json, file) {
  if (!isObject(json)) throw invalid(file, `expected a JSON object, got ${describe(json)}`);
  const { model } = json;
  if (!isObject(model)) throw invalid(file, `field 'model' is ${describe(model)}; expected an object with 'type' and 'vocab'`);
  const types = ['BPE', 'WordPiece', 'Unigram'];
  if (model.type !== undefined && !types.includes(model.type)) {
    throw invalid(file, `field 'model.type' is ${describe(model.type)}; expected ${types.join(', ')}`);
  }
  if (model.type === 'Unigram' || (model.type === undefined && Array.isArray(model.vocab))) {
    if (!Array.isArray(model.vocab)) throw invalid(file, `field 'model.vocab' is ${describe(model.vocab)}; expected Unigram's [[piece, score], …]`);
    model.vocab.forEach((/** @type {unknown} */ entry, /** @type {number} */ i) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') {
        throw invalid(file, `field 'model.vocab' entry ${i} is ${describe(entry)}; expected [piece, score]`);
      }
    });
  } else {
    if (!isObject(model.vocab)) throw invalid(file, `field 'model.vocab' is ${describe(model.vocab)}; expected an object of piece: id`);
    for (const [piece, id] of Object.entries(model.vocab)) {
      if (!isId(id)) throw invalid(file, `field 'model.vocab' entry ${JSON.stringify(piece)} is ${describe(id)}; expected an id (a whole number >= 0)`);
    }
  }
  if (model.type === 'BPE') {
    if (!Array.isArray(model.merges)) throw invalid(file, `field 'model.merges' is ${describe(model.merges)}; expected an array of merges`);
    model.merges.forEach((/** @type {unknown} */ merge, /** @type {number} */ i) => {
      const pair = typeof merge === 'string' ? merge.split(' ') : merge;
      if (!Array.isArray(pair) || pair.length !== 2 || pair.some((p) => typeof p !== 'string' || p === '')) {
        throw invalid(file, `field 'model.merges' entry ${i} is ${describe(merge)}; expected "left right" or [left, right]`);
      }
    });
  }
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw invalid(file, `field 'added_tokens' is ${describe(added)}; expected an array`);
  added.forEach((/** @type {any} */ token, /** @type {number} */ i) => {
    if (!isObject(token) || !isId(token.id) || typeof token.content !== 'string' || token.content === '') {
      throw invalid(file, `field 'added_tokens' entry ${i} is ${describe(token)}; expected { id, content }`);
    }
  });
  const unk = model.unk_token;
  if (isObject(model.vocab) && unk !== undefined && unk !== null
      && !(typeof unk === 'string' && (Object.hasOwn(model.vocab, unk) || added.some((/** @type {any} */ t) => t.content === unk)))) {
    throw invalid(file, `field 'model.unk_token' is ${describe(unk)}; expected a piece of model.vocab or added_tokens, or null`);
  }
}

/** The name of a content that may be an AddedToken object ({ content }) in tokenizer_config.json. @param {unknown} token */
const contentOf = (token) => (typeof token === 'string' ? token : isObject(token) && typeof (/** @type {any} */ (token)).content === 'string' ? /** @type {any} */ (token).content : null);

/** Whether a decoder (or any decoder of a Sequence) or pre-tokeniser is of `type`. @param {any} part @param {string} type @returns {boolean} */
const uses = (part, type) => isObject(part) && (part.type === type || [...(part.decoders ?? []), ...(part.pretokenizers ?? [])].some((p) => uses(p, type)));

/**
 * The tokenizer's name as a reader knows it: byte-level BPE (GPT-2, Llama 3), WordPiece (BERT),
 * BPE with byte fallback (Llama 2's SentencePiece), Unigram (T5), BPE.
 * @param {any} json
 */
function nameOf(json) {
  const type = json.model.type ?? (Array.isArray(json.model.vocab) ? 'Unigram' : 'BPE');
  if (type !== 'BPE') return type;
  if (uses(json.pre_tokenizer, 'ByteLevel') || uses(json.decoder, 'ByteLevel')) return 'byte-level BPE';
  return json.model.byte_fallback ? 'BPE with byte fallback' : 'BPE';
}

// Decoded after this piece, a piece decodes as it does inside a text, not as a text's first
// piece (which decoders treat apart: WordPiece keeps its "##", Metaspace drops its space).
const ANCHOR = 'a';
/** Punctuation and symbols only (a word of their own). */
const PUNCTUATION = /^[\p{P}\p{S}]+$/u;
/** What continues the character before it: a combining mark, a variation selector, a zero-width joiner. */
const JOINS_BEFORE = /^[\p{M}\u200D]/u;
/** SentencePiece's byte fallback: a byte the vocabulary has no piece for, as <0xNN>. */
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * Byte-level BPE's alphabet (GPT-2's bytes_to_unicode): byte b is the character of that code
 * for the printable bytes 33–126, 161–172 and 174–255, and 256, 257, … for the others in order.
 * Here the other way round: character -> byte.
 * @type {Map<string, number>}
 */
const BYTE_OF_CHARACTER = (() => {
  const map = new Map();
  let next = 256;
  for (let b = 0; b < 256; b += 1) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    map.set(String.fromCodePoint(printable ? b : next++), b);
  }
  return map;
})();

/** The UTF-8 sequence length a lead byte announces (0: not a lead byte). @param {number} b */
const sequenceLength = (b) => (b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The characters a run of pieces spells together whose bytes split characters between them:
 * for each piece, the characters it helps spell (`text`), those that begin in it (`own`), and
 * whether it begins inside a character; null for a piece whose bytes spell nothing whole.
 * @param {number[][]} runBytes  each piece's bytes
 * @returns {({ text: string, own: string, inside: boolean } | null)[]}
 */
function spellTogether(runBytes) {
  const bytes = runBytes.flat();
  /** @type {number[]} */
  const pieceAt = runBytes.flatMap((b, i) => b.map(() => i));
  /** @type {({ text: string, own: string, inside: boolean, bad: boolean })[]} */
  const out = runBytes.map(() => ({ text: '', own: '', inside: false, bad: false }));
  for (let p = 0; p < bytes.length;) {
    const n = sequenceLength(bytes[p]);
    let char = null;
    if (n > 0 && p + n <= bytes.length) {
      try { char = strictUtf8.decode(Uint8Array.from(bytes.slice(p, p + n))); } catch { char = null; }
    }
    if (char === null) {
      out[pieceAt[p]].bad = true;
      p += 1;
      continue;
    }
    const first = pieceAt[p];
    const last = pieceAt[p + n - 1];
    out[first].own += char;
    for (let i = first; i <= last; i += 1) {
      out[i].text += char;
      if (i > first) out[i].inside = true;
    }
    p += n;
  }
  return out.map((o) => (o.bad ? null : { text: o.text, own: o.own, inside: o.inside }));
}

export class ModelTokenizer {
  /** @type {LibraryTokenizer} */
  #tokenizer;
  /** @type {Set<number>} */
  #special;
  /** piece -> its decoded text, whether it starts a word, whether it splits a character @type {Map<string, { text: string, starts: boolean, partial: boolean }>} */
  #shown = new Map();
  /** @type {string} */
  #anchorText;
  /** how messages name tokenizer.json @type {string} */
  #file;
  /** pieces are bytes in byte-level BPE's alphabet (GPT-2, Llama 3, Qwen2) */
  #byteLevel;
  /** the vocabulary spells a byte it has no piece for as <0xNN> (Llama 2's SentencePiece) */
  #byteFallback;

  /**
   * @param {LibraryTokenizer} tokenizer
   * @param {any} json  tokenizer.json, checked
   * @param {any} config  tokenizer_config.json, or {}
   * @param {string} file  how messages name tokenizer.json
   */
  constructor(tokenizer, json, config, file) {
    this.#tokenizer = tokenizer;
    /** The files it was read from, to read it again in a worker (tokenizer-worker.js). @type {import('./tokenizer-worker.js').TokenizerSource | null} */
    this.source = null;
    this.#file = file;
    this.#byteLevel = uses(json.pre_tokenizer, 'ByteLevel') || uses(json.decoder, 'ByteLevel');
    this.#byteFallback = json.model.byte_fallback === true;
    const added = [...tokenizer.get_added_tokens_decoder().values()];
    this.#special = new Set(added.filter((t) => t.special).map((t) => t.id));
    this.#anchorText = this.#decode([ANCHOR]);
    // the mask a masked LM fills in: tokenizer_config.json's mask_token, else the special token
    // of that conventional name (BERT's [MASK], RoBERTa's <mask>)
    const maskName = contentOf(config.mask_token);
    const mask = maskName !== null ? tokenizer.token_to_id(maskName)
      : added.find((t) => t.special && (t.content === '[MASK]' || t.content === '<mask>'))?.id;
    /** @type {TokenizerInfo} */
    this.info = Object.freeze({
      kind: /** @type {TokenizerInfo['kind']} */ (String(json.model.type ?? (Array.isArray(json.model.vocab) ? 'Unigram' : 'BPE')).toLowerCase()),
      name: nameOf(json),
      vocabSize: tokenizer.model?.vocab.length ?? 0,
      maskId: mask ?? null,
    });
  }

  /**
   * The ids of a text, with the post-processor's special tokens ([CLS] … [SEP], <s>).
   * @param {string} text
   * @returns {number[]}
   */
  encode(text) {
    if (typeof text !== 'string') throw new MhaError('INVALID_ARGUMENT', `encode: expected a string, got ${describe(text)}`);
    const { ids, tokens } = this.#library('encode a text', () => this.#tokenizer.encode(text));
    const missing = ids.findIndex((id) => !isId(id));
    if (missing >= 0) {
      throw new MhaError('INVALID_ARGUMENT', `the text's piece ${missing}, ${JSON.stringify(tokens[missing])}, is not in the tokenizer's vocabulary, and tokenizer.json names no unk_token to stand for it`);
    }
    return ids;
  }

  /**
   * A call into the library; what it throws on a tokenizer.json it read without complaint (a part
   * it reads only when used) becomes an error naming the file.
   * @template T
   * @param {string} what
   * @param {() => T} call
   * @returns {T}
   */
  #library(what, call) {
    try {
      return call();
    } catch (error) {
      if (error instanceof MhaError) throw error;
      throw invalid(this.#file, `the tokenizer library could not ${what} with it: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Pieces put back into text by the decoder (joined as they are without one). @param {string[]} pieces */
  #decode(pieces) {
    const { decoder } = this.#tokenizer;
    return decoder ? this.#library('decode pieces', () => decoder.decode(pieces)) : pieces.join('');
  }

  /** The vocabulary's string for an id ('' for an id it has not). @param {number} id */
  token(id) {
    return this.#tokenizer.id_to_token(id) ?? '';
  }

  /**
   * A piece's text as the decoder makes it inside a text, whether it starts a word, and whether
   * it ends or begins inside a character (its bytes are then read with its neighbours').
   * @param {string} piece
   */
  #read(piece) {
    let shown = this.#shown.get(piece);
    if (!shown) {
      const decoded = this.#decode([ANCHOR, piece]);
      const text = decoded.startsWith(this.#anchorText) ? decoded.slice(this.#anchorText.length) : piece;
      const partial = text.includes('\uFFFD') && !piece.includes('\uFFFD');
      shown = { text: partial ? piece : text, starts: /^\s/u.test(text), partial };
      this.#shown.set(piece, shown);
    }
    return shown;
  }

  /** A piece's bytes, where the tokenizer spells pieces as bytes (else null). @param {string} piece @returns {number[] | null} */
  #bytes(piece) {
    if (this.#byteFallback) {
      const byte = BYTE_PIECE.exec(piece);
      return byte ? [parseInt(byte[1], 16)] : null;
    }
    if (!this.#byteLevel) return null;
    const bytes = Array.from(piece, (c) => BYTE_OF_CHARACTER.get(c) ?? -1);
    return bytes.includes(-1) ? null : bytes;
  }

  /**
   * What each piece shows: its decoder's text; where pieces split a character's bytes between
   * them (a byte-fallback <0xF0>, byte-level BPE's "ðŁ"), the character each helps spell, read
   * from the run of such pieces together; a piece whose bytes spell nothing whole, as spelled.
   * @param {string[]} pieces  @param {boolean[]} special
   */
  #texts(pieces, special) {
    const shown = pieces.map((piece) => {
      const { text, starts, partial } = this.#read(piece);
      return { text, starts, own: text, inside: false, partial };
    });
    for (let i = 0; i < pieces.length;) {
      let end = i;
      /** @type {number[][]} */
      const run = [];
      while (end < pieces.length && shown[end].partial && !special[end]) {
        const bytes = this.#bytes(pieces[end]);
        if (!bytes) break;
        run.push(bytes);
        end += 1;
      }
      spellTogether(run).forEach((spelled, k) => {
        if (!spelled) return;
        Object.assign(shown[i + k], { text: spelled.text, own: spelled.own, inside: spelled.inside, starts: /^\s/u.test(spelled.text) && !spelled.inside });
      });
      i = Math.max(end, i + 1);
    }
    return shown;
  }

  /**
   * How the pieces of ids read: the vocabulary's strings; what each shows; the word of each (a
   * piece whose text begins with white space starts one, punctuation and special tokens are
   * words of their own; a piece of white space alone begins the word after it; a piece that
   * begins inside a character, or with a combining mark, stays in the word before it); each in
   * SentencePiece's convention ("▁" where a word starts, then the characters that begin in the
   * piece, without white space), which the roles rule reads; which are special tokens.
   * @param {ArrayLike<number>} ids
   * @returns {TokenReading}
   */
  read(ids) {
    const pieces = Array.from(ids, (id) => this.token(id));
    const special = Array.from(ids, (id) => this.#special.has(id));
    const shown = this.#texts(pieces, special);
    const texts = shown.map((s) => s.text);
    const punctuation = texts.map((t) => PUNCTUATION.test(t.trim()));
    const blank = texts.map((t, i) => !special[i] && t !== '' && t.trim() === '');
    /** @type {number[]} */
    const words = [];
    /** @type {string[]} */
    const marked = [];
    let word = -1;
    shown.forEach(({ own, starts, inside }, i) => {
      const joins = i > 0 && !special[i] && !special[i - 1] && (inside || JOINS_BEFORE.test(texts[i]) || (blank[i - 1] && !starts));
      const begins = i === 0 || (!joins && (starts || special[i] || punctuation[i] || special[i - 1] || punctuation[i - 1]));
      if (begins) word += 1;
      words.push(word);
      marked.push(`${begins ? '▁' : ''}${own.trim()}`);
    });
    return { pieces, texts, words, marked, special };
  }
}

/**
 * Reads tokenizer.json (and tokenizer_config.json) with the library.
 * @param {string} tokenizerText  tokenizer.json's text
 * @param {string | null} [configText]  tokenizer_config.json's text, if there is one
 * @param {{ tokenizerFile?: string, configFile?: string }} [where]  how messages name the files
 * @returns {Promise<ModelTokenizer>}
 */
export async function loadTokenizer(tokenizerText, configText = null, { tokenizerFile = 'tokenizer.json', configFile = 'tokenizer_config.json' } = {}) {
  const json = parseJson(tokenizerText, tokenizerFile);
  checkTokenizerJson(json, tokenizerFile);
  const config = configText === null ? {} : parseJson(configText, configFile);
  if (!isObject(config)) throw invalid(configFile, `expected a JSON object, got ${describe(config)}`);
  const { Tokenizer } = await tokenizersLibrary();
  let tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (error) {
    throw invalid(tokenizerFile, `the tokenizer library cannot read it: ${error instanceof Error ? error.message : String(error)}`);
  }
  const read = new ModelTokenizer(tokenizer, json, config, tokenizerFile);
  read.source = { tokenizerText, configText, where: { tokenizerFile, configFile } };
  return read;
}
