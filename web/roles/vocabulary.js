// The ids of what a head can be named by, used everywhere a head is labelled: the training core's
// relation names (cpp/src/train/grammar.cpp's relation_name), the JS API (web/lib/train.js), the
// evaluation (web/roles/evaluate.js), the page, the element and the docs. Each id has one meaning.

/**
 * Roles: where a query row's weight goes, as a mean share over rows. Piece roles are measured on
 * the model's tokens; word roles on words (a query word's pieces averaged, a key word's summed).
 */
/** @typedef {Record<string, { name: string, what: string }>} Labels */
/** @type {Labels} */
export const ROLES = {
  previous: { name: 'previous token', what: 'the token right before the query' },
  next: { name: 'next token', what: 'the token right after the query' },
  self: { name: 'itself', what: 'the query token itself' },
  first: { name: 'first token', what: 'the sentence\'s first token' },
  finalPunctuation: { name: 'final punctuation', what: 'the sentence\'s final punctuation mark' },
  sameWord: { name: 'its own word', what: 'the other pieces (tokens) of the query\'s own word' },
  previousFew: { name: 'previous few words', what: 'the three words before the query word' },
  nouns: { name: 'nouns', what: 'the sentence\'s nouns and proper nouns, the query word aside' },
  subject: { name: 'subjects', what: 'the subjects of the sentence\'s verbs, the query word aside' },
};

/**
 * Relations: a query word and the key word(s) it should pick. A head picks the key word it
 * weights most (the query word itself excluded), and is scored by how often that is right.
 */
/** @type {Labels} */
export const RELATIONS = {
  determinerNoun: { name: 'determiner → noun', what: 'a determiner to the head noun of its noun phrase' },
  adjectiveNoun: { name: 'adjective → noun', what: 'an attributive adjective to the noun it modifies' },
  verbSubject: { name: 'verb → subject', what: 'a lexical verb to the head of its subject' },
  objectVerb: { name: 'object → verb', what: 'the head of a direct object to its verb' },
  prepositionObject: { name: 'preposition → object', what: 'a preposition to the head of its object' },
  possessiveNoun: { name: 'possessive → noun', what: 'a possessive determiner to the noun it modifies' },
  pronounAntecedent: { name: 'pronoun → antecedent', what: 'a personal pronoun to the noun it refers to' },
  nounModifier: { name: 'noun → modifier', what: 'a noun to its determiner or adjective (either counts)' },
  induction: { name: 'induction', what: 'a token of a repeated phrase to the token after its first occurrence' },
};

/** Labels of heads that no role or relation names. */
/** @type {Labels} */
export const OTHER_LABELS = {
  broad: { name: 'broad', what: 'its rows are near uniform: it averages over the sentence' },
  mixed: { name: 'mixed', what: 'it clears no bar: its weight is split over several things at once' },
};

/** Every label id, in one list. */
export const LABELS = [...Object.keys(ROLES), ...Object.keys(RELATIONS), ...Object.keys(OTHER_LABELS)];

/** The words a label id is shown as. @param {string} id */
export function labelName(id) {
  const entry = ROLES[id] ?? RELATIONS[id] ?? OTHER_LABELS[id];
  if (!entry) throw new Error(`unknown role or relation id "${id}": expected one of ${LABELS.join(', ')}`);
  return entry.name;
}
