// From text to tagged tokens: the part-of-speech tags come from the `compromise` tagger; this
// file splits punctuation into tokens of its own, maps the tagger's tags to a small tag set,
// adds a coarse semantic class, number and gender, and finds a shallow parse: noun chunks,
// the subject of each verb and the noun each modifier describes.
//
// Nothing here knows about attention. The parse becomes per-token feature vectors in
// embeddings.js; the designed heads only match those vectors.

export const MAX_TOKENS = 64;

/** Coarse parts of speech, in the order of the embedding's one-hot block. */
export const POS_TAGS = ['NOUN', 'PROPN', 'PRON', 'VERB', 'ADJ', 'ADV', 'DET', 'ADP', 'CONJ', 'NUM', 'OTHER'];

/** Coarse semantic classes, in the order of the embedding's one-hot block. */
export const SEMANTIC_CLASSES = ['person', 'animal', 'thing', 'place', 'time', 'action', 'quality', 'function'];

const ANIMALS = new Set(
  ('cat cats dog dogs mouse mice bird birds fox foxes horse horses cow cows pig pigs sheep goat goats ' +
    'lion lions tiger tigers bear bears wolf wolves rabbit rabbits fish owl owls duck ducks chicken ' +
    'chickens hen hens snake snakes frog frogs monkey monkeys elephant elephants deer puppy puppies ' +
    'kitten kittens animal animals bee bees ant ants whale whales dolphin dolphins squirrel squirrels')
    .split(' '));

// Person nouns with a grammatical gender; other person nouns (teacher, student) are open.
const MALE_NOUNS = new Set(
  'man men boy boys father fathers brother brothers king kings son sons husband uncle grandfather gentleman prince waiter'.split(' '));
const FEMALE_NOUNS = new Set(
  'woman women girl girls mother mothers sister sisters queen queens daughter daughters wife aunt grandmother lady princess waitress'.split(' '));
const PERSON_NOUNS = new Set(
  ('people person child children kid kids friend friends teacher teachers student students doctor doctors ' +
    'nurse nurses farmer farmers author authors critic critics scientist scientists baker bakers artist ' +
    'artists player players team parent parents baby babies neighbour neighbor neighbours neighbors ' +
    'chef chefs driver drivers writer writers reader readers engineer engineers lawyer judge pilot')
    .split(' '));
const PLACES = new Set(
  ('city cities town village house home school park garden kitchen room market street road country ' +
    'river lake sea beach forest mountain office library station shop store church field farm world ' +
    'table mat floor bed') // surfaces and furniture count as places one can be on
    .split(' '));
const TIMES = new Set(
  ('morning evening night day days week weeks year years month months hour hours minute minutes ' +
    'today tomorrow yesterday afternoon summer winter spring autumn time moment').split(' '));

// Closed classes the tagger leaves ambiguous for this purpose.
/** @type {Record<string, Pronoun>} */
const PERSONAL_PRONOUNS = {
  // third person: number and gender, and whether it can point back to a noun
  he: { gender: 'm', number: 'sg', person: 3 }, him: { gender: 'm', number: 'sg', person: 3 },
  his: { gender: 'm', number: 'sg', person: 3, possessive: true }, himself: { gender: 'm', number: 'sg', person: 3 },
  she: { gender: 'f', number: 'sg', person: 3 }, her: { gender: 'f', number: 'sg', person: 3 },
  hers: { gender: 'f', number: 'sg', person: 3 }, herself: { gender: 'f', number: 'sg', person: 3 },
  it: { gender: 'n', number: 'sg', person: 3 }, its: { gender: 'n', number: 'sg', person: 3, possessive: true },
  itself: { gender: 'n', number: 'sg', person: 3 },
  they: { gender: null, number: 'pl', person: 3 }, them: { gender: null, number: 'pl', person: 3 },
  their: { gender: null, number: 'pl', person: 3, possessive: true }, theirs: { gender: null, number: 'pl', person: 3 },
  themselves: { gender: null, number: 'pl', person: 3 },
  i: { person: 1, number: 'sg' }, me: { person: 1, number: 'sg' }, my: { person: 1, number: 'sg', possessive: true },
  mine: { person: 1, number: 'sg' }, we: { person: 1, number: 'pl' }, us: { person: 1, number: 'pl' },
  our: { person: 1, number: 'pl', possessive: true }, you: { person: 2 }, your: { person: 2, possessive: true },
};
const RELATIVE_WORDS = new Set(['who', 'whom', 'which', 'whose']);
const CLAUSE_OPENERS = new Set(['because', 'although', 'though', 'while', 'when', 'since', 'if', 'and', 'but', 'or', 'so', 'after', 'before', 'until', 'unless', 'whereas']);

// Prepositions the tagger sometimes calls adjectives or adverbs ("jumps over the dog").
const PREPOSITIONS = new Set('over under above below across through into onto off near behind beside beyond past around along inside outside'.split(' '));

/**
 * compromise's confidence in a tag it fell back on: no lexicon entry, suffix, pattern or
 * neighbour told it anything about the word, so it called it a noun.
 */
export const FALLBACK_CONFIDENCE = 0.1;

/**
 * Split compromise's terms into tokens: words keep their text; punctuation written before or
 * after a word becomes tokens of its own (a possessive apostrophe stays with its word). A word
 * the tagger knew nothing about is marked `unknown`.
 * @param {Array<{text:string, pre:string, post:string, tags:string[], confidence?: number}>} terms
 */
export function splitTerms(terms) {
  /** @type {{ text: string, tags: string[], unknown?: true }[]} */
  const tokens = [];
  const pushPunctuation = (/** @type {string} */ chunk) => {
    // "..." and "?!" stay whole; ", " and "." split on spaces.
    for (const piece of chunk.split(/\s+/)) if (piece) tokens.push({ text: piece, tags: ['Punctuation'] });
  };
  for (const term of terms) {
    if (term.pre && term.pre.trim()) pushPunctuation(term.pre.trim());
    let post = term.post || '';
    let text = term.text;
    if (!text) {
      // compromise expands contractions into an empty extra term ("don't" -> "don't" + "")
      if (post.trim()) pushPunctuation(post.trim());
      continue;
    }
    if (/^['’]/.test(post)) { text += post[0]; post = post.slice(1); }
    tokens.push({ text, tags: term.tags.slice(), ...(term.confidence !== undefined && term.confidence <= FALLBACK_CONFIDENCE ? { unknown: /** @type {true} */ (true) } : {}) });
    if (post.trim()) pushPunctuation(post.trim());
  }
  return tokens;
}

/** @param {string} word @param {string[]} tags */
function coarsePos(word, tags) {
  const lower = word.toLowerCase();
  const has = (/** @type {string} */ t) => tags.includes(t);
  if (has('Punctuation')) return 'PUNCT';
  if (RELATIVE_WORDS.has(lower)) return 'PRON';
  if (PERSONAL_PRONOUNS[lower] && (has('Pronoun') || has('Possessive') || has('Noun') || has('Determiner'))) return 'PRON';
  if (has('Pronoun')) return 'PRON';
  if (has('Value') || has('Cardinal') || has('NumericValue')) return 'NUM';
  if (has('ProperNoun') || has('Person') || has('Place') || has('Organization')) return has('Noun') || has('Person') ? 'PROPN' : 'NOUN';
  if (has('Noun')) return 'NOUN';
  if (has('Verb') || has('Auxiliary') || has('Copula') || has('Modal')) return 'VERB';
  if (has('Adjective')) return 'ADJ';
  if (has('Adverb') || has('Negative')) return 'ADV';
  if (has('Determiner')) return 'DET';
  if (has('Preposition')) return 'ADP';
  if (has('Conjunction')) return 'CONJ';
  return 'OTHER';
}

/** @param {string} lower @param {string} pos @param {string[]} tags */
function semanticClass(lower, pos, tags) {
  const has = (/** @type {string} */ t) => tags.includes(t);
  if (pos === 'PUNCT' || pos === 'DET' || pos === 'ADP' || pos === 'CONJ' || pos === 'OTHER') return 'function';
  if (pos === 'VERB') return 'action';
  if (pos === 'ADJ' || pos === 'ADV') return 'quality';
  if (pos === 'NUM') return 'time'; // numbers and times share the "when / how many" class
  if (pos === 'PRON') {
    if (RELATIVE_WORDS.has(lower)) return 'function';
    const p = PERSONAL_PRONOUNS[lower];
    if (p && p.gender === 'n') return 'thing';
    return 'person';
  }
  if (has('Person') || has('FirstName') || has('LastName') || has('Actor')) return 'person';
  if (ANIMALS.has(lower)) return 'animal';
  if (MALE_NOUNS.has(lower) || FEMALE_NOUNS.has(lower) || PERSON_NOUNS.has(lower)) return 'person';
  if (has('Place') || has('City') || has('Country') || PLACES.has(lower)) return 'place';
  if (has('Date') || has('Time') || has('Duration') || TIMES.has(lower)) return 'time';
  return 'thing';
}

/** @param {string} lower @param {string[]} tags @param {string} cls @returns {{ m: number, f: number, n: number }} */
function nounGender(lower, tags, cls) {
  if (tags.includes('MaleName') || MALE_NOUNS.has(lower)) return { m: 1, f: 0, n: 0 };
  if (tags.includes('FemaleName') || FEMALE_NOUNS.has(lower)) return { m: 0, f: 1, n: 0 };
  if (cls === 'person') return { m: 1, f: 1, n: 0 }; // teacher, Alex: either
  return { m: 0, f: 0, n: 1 };
}

const isNominal = (/** @type {string} */ pos) => pos === 'NOUN' || pos === 'PROPN';

/**
 * Tag tokens and parse them shallowly.
 * @param {Array<{text:string, tags:string[], unknown?: boolean}>} rawTokens from splitTerms
 * @returns {Token[] & { chunks: Chunk[] }}
 */
export function analyseTokens(rawTokens) {
  const tokens = rawTokens.map((raw, index) => {
    const lower = raw.text.toLowerCase().replace(/['’]s?$/, '');
    let pos = coarsePos(raw.text, raw.tags);
    /** @type {Token} */
    const token = {
      index, text: raw.text, tags: raw.tags, pos, cls: 'function', number: null, gender: null,
      isFirst: index === 0, isPunct: pos === 'PUNCT', possessive: false,
      pronoun: null, chunk: -1, isHead: false, isSubject: false,
      subjectOf: [], subject: -1, modifies: -1, boundary: false, unknown: !!raw.unknown,
    };
    token.cls = semanticClass(lower, pos, raw.tags);
    if (isNominal(pos)) {
      token.number = raw.tags.includes('Plural') ? 'pl' : 'sg';
      token.gender = nounGender(lower, raw.tags, token.cls);
    }
    if (pos === 'PRON' && PERSONAL_PRONOUNS[lower]) {
      const p = PERSONAL_PRONOUNS[lower];
      token.pronoun = p;
      token.possessive = !!p.possessive || (lower === 'her' && raw.tags.includes('Possessive'));
      token.number = p.number || null;
    }
    if (RELATIVE_WORDS.has(lower) || (pos === 'CONJ' && CLAUSE_OPENERS.has(lower))) token.boundary = true;
    return token;
  });

  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    if ((t.pos === 'ADJ' || t.pos === 'ADV') && PREPOSITIONS.has(t.text.toLowerCase()) && next &&
        ['DET', 'NOUN', 'PROPN', 'PRON', 'NUM', 'ADJ'].includes(next.pos)) {
      t.pos = 'ADP'; t.cls = 'function';
    }
  });

  // "that" after a noun or verb and before a noun phrase opens a clause ("the author that the critics loved")
  tokens.forEach((t, i) => {
    if (t.text.toLowerCase() !== 'that') return;
    const prev = tokens[i - 1];
    const next = tokens[i + 1];
    if (prev && next && (isNominal(prev.pos) || prev.pos === 'VERB') &&
        ['DET', 'PRON', 'NOUN', 'PROPN', 'ADJ', 'NUM'].includes(next.pos)) {
      t.pos = 'CONJ'; t.cls = 'function'; t.boundary = true;
    }
  });
  for (const t of tokens) if (t.isPunct && /[,;:.!?]/.test(t.text)) t.boundary = true;

  // Noun chunks: [DET | possessive | NUM | ADJ]* NOUN+ ; or a lone personal pronoun.
  /** @type {Chunk[]} */
  const chunks = [];
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i];
    if (t.pos === 'PRON' && t.pronoun && !t.possessive) {
      chunks.push({ start: i, end: i, head: i });
      i += 1;
      continue;
    }
    const isModifier = (/** @type {Token} */ u) => u.pos === 'DET' || u.pos === 'ADJ' || u.pos === 'NUM' || (u.pos === 'PRON' && u.possessive);
    let j = i;
    while (j < tokens.length && isModifier(tokens[j])) j += 1;
    let k = j;
    while (k < tokens.length && isNominal(tokens[k].pos)) {
      k += 1;
      // a possessive noun ("boys'") closes its own chunk and modifies the next one
      if (/['’]s?$/.test(tokens[k - 1].text)) break;
    }
    if (k > j) {
      chunks.push({ start: i, end: k - 1, head: k - 1 });
      i = k;
    } else {
      i = Math.max(i + 1, j);
    }
  }
  chunks.forEach((chunk, id) => {
    for (let p = chunk.start; p <= chunk.end; p += 1) tokens[p].chunk = id;
    tokens[chunk.head].isHead = true;
    for (let p = chunk.start; p < chunk.head; p += 1) tokens[p].modifies = chunk.head;
    // what role the chunk plays: inside a prepositional phrase, or right after a verb (an object)
    const before = tokens[chunk.start - 1];
    chunk.prepositional = !!before && before.pos === 'ADP';
    let back = chunk.start - 1;
    while (back >= 0 && !tokens[back].boundary && tokens[back].pos !== 'VERB' && tokens[back].pos !== 'ADP') back -= 1;
    chunk.afterVerb = back >= 0 && tokens[back].pos === 'VERB';
  });

  // Subjects: for each verb, the nearest earlier chunk that is not in a prepositional phrase,
  // not an object of an earlier verb and not yet the subject of another verb; with none, a verb
  // shares the subject of the verb before it (auxiliaries, coordinated verbs).
  /** @type {Set<number>} */
  const usedAsSubject = new Set();
  let previousVerb = -1;
  tokens.forEach((t, v) => {
    if (t.pos !== 'VERB') return;
    let subjectChunk = -1;
    const chunkBetweenVerbs = chunks.some((c) => c.head < v && c.head > previousVerb && !c.prepositional && !c.afterVerb);
    let before = v - 1;
    while (before >= 0 && tokens[before].pos === 'ADV') before -= 1;
    const afterAuxiliary = before >= 0 && tokens[before].pos === 'VERB' &&
      tokens[before].tags.some((tag) => tag === 'Auxiliary' || tag === 'Modal');
    const afterAnd = before >= 0 && tokens[before].pos === 'CONJ' && /^(and|or|but)$/i.test(tokens[before].text);
    if (previousVerb >= 0 && (afterAuxiliary || afterAnd) && !chunkBetweenVerbs) {
      subjectChunk = -2; // "have finished", "barked and ran": the previous verb's subject
    } else {
      const candidate = (/** @type {boolean} */ allowObjects) => {
        for (let c = chunks.length - 1; c >= 0; c -= 1) {
          const chunk = chunks[c];
          if (chunk.head >= v || chunk.prepositional || usedAsSubject.has(c)) continue;
          if (chunk.afterVerb && !allowObjects) continue;
          const head = tokens[chunk.head];
          if (head.pos === 'PRON' && head.pronoun && /^(me|him|her|us|them)$/i.test(head.text)) continue; // object pronouns
          return c;
        }
        return -1;
      };
      subjectChunk = candidate(false);
      // "I think the dogs ran": the object of "think" is the subject of "ran"
      if (subjectChunk < 0) subjectChunk = candidate(true);
    }
    if (subjectChunk >= 0) {
      usedAsSubject.add(subjectChunk);
      t.subject = chunks[subjectChunk].head;
    } else if (previousVerb >= 0) {
      t.subject = tokens[previousVerb].subject;
    }
    if (t.subject >= 0) {
      tokens[t.subject].isSubject = true;
      tokens[t.subject].subjectOf.push(v);
    }
    previousVerb = v;
  });

  // A predicative adjective ("it was tired") describes the subject of the verb before it.
  tokens.forEach((t, a) => {
    if (t.pos !== 'ADJ' || t.modifies >= 0) return;
    for (let v = a - 1; v >= 0 && !tokens[v].boundary; v -= 1) {
      if (tokens[v].pos === 'VERB') { t.modifies = tokens[v].subject; break; }
    }
  });
  return Object.assign(tokens, { chunks });
}

/**
 * Tag a text with compromise (passed in, so this module loads without it).
 * @param {typeof import('../vendor/compromise-three.mjs').default} nlp compromise's default export
 * @param {string} text
 */
export function tagText(nlp, text) {
  const doc = nlp(text);
  const terms = doc.json({ terms: { offset: false } }).flatMap((sentence) => sentence.terms);
  return splitTerms(terms);
}

/**
 * Turn a tagged-token list into the plain, serialisable record the page stores.
 * @param {{ text: string, tags: string[], unknown?: boolean }[]} tokens
 */
export function rawTokensOf(tokens) {
  return tokens.map((t) => ({ text: t.text, tags: t.tags, ...(t.unknown ? { unknown: /** @type {true} */ (true) } : {}) }));
}

/**
 * @typedef {object} Token
 * @property {number} index
 * @property {string} text
 * @property {string[]} tags  compromise's tags
 * @property {string} pos  one of POS_TAGS or 'PUNCT'
 * @property {string} cls  one of SEMANTIC_CLASSES
 * @property {'sg'|'pl'|null} number
 * @property {{m:number,f:number,n:number}|null} gender  nouns only
 * @property {boolean} isFirst
 * @property {boolean} isPunct
 * @property {boolean} possessive
 * @property {Pronoun|null} pronoun  personal pronoun record (person, number, gender)
 * @property {number} chunk  noun-chunk id, -1 outside chunks
 * @property {boolean} isHead  head noun (or pronoun) of its chunk
 * @property {boolean} isSubject
 * @property {number[]} subjectOf  subjects: the verbs whose subject this is
 * @property {boolean} boundary  opens or closes a clause (a relative word, a clause opener, punctuation)
 * @property {number} subject  verbs: token index of the subject's head, else -1
 * @property {number} modifies  modifiers: token index of the noun described, else -1
 * @property {boolean} unknown  the tagger knew nothing of the word and fell back on calling it a noun
 */

/**
 * A personal pronoun: person, and where English marks them, number and gender.
 * @typedef {{ person: number, number?: 'sg' | 'pl', gender?: 'm' | 'f' | 'n' | null, possessive?: boolean }} Pronoun
 */

/**
 * A noun chunk: tokens start..end, its head noun, and its role.
 * @typedef {{ start: number, end: number, head: number, prepositional?: boolean, afterVerb?: boolean }} Chunk
 */
