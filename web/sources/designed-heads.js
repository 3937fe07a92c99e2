// Eight attention heads written down from a specification, in the spirit of compiled
// transformers (Tracr, RASP): each head's W_Q, W_K, W_V rows are set by hand against the
// feature layout of embeddings.js so that the head carries out one relation. The result is an
// ordinary PyTorch state_dict for nn.MultiheadAttention(64, 8); the WebAssembly core runs it.
//
// Scores are q·k / sqrt(head_dim). Every W_Q below carries the factor sqrt(head_dim) · S, so
// that the score of a perfect match is S "logits"; S sets how sharp the softmax is.

import { D_MODEL, LAYOUT, POSITION_FREQUENCIES } from './embeddings.js';
import { POS_TAGS } from './tokens.js';

export const NUM_HEADS = 8;
export const HEAD_DIM = D_MODEL / NUM_HEADS;

/** Logit of a perfect match, per head (see the head descriptions). */
export const SHARPNESS = {
  position: 16, sameClass: 10, subject: 20, agreement: 12, genderMismatch: 6, subjectBonus: 4,
  modifier: 20, fallbackSink: 6, sink: 12,
};

/** What the page says about each head. */
export const HEADS = [
  {
    short: 'Previous token', name: 'Position-based: previous token',
    focus: 'the token just before each word (position i − 1).',
    how: `W_K copies the sinusoidal position code of each token. W_Q copies the same code but rotates each cos/sin pair back by one step (angle −ω per pair), so q_i equals the code of position i − 1 and q_i·k_j = Σ cos(ω (i − 1 − j)) peaks at j = i − 1. The four frequencies are chosen so that every other offset up to 63 scores at most 0.48 of a match; with S = ${SHARPNESS.position} that is a gap of at least ${(SHARPNESS.position * 0.52).toFixed(1)} logits. W_V copies the part of speech (folded into 8 numbers): each word learns what kind of word came before it.`,
    typical: 'in trained models, previous-token heads appear in the first layers of almost every transformer; they feed "induction heads" that copy what followed an earlier occurrence of the current token.',
  },
  {
    short: 'Next token', name: 'Position-based: next token',
    focus: 'the token just after each word (position i + 1).',
    how: 'The same construction as head 1 with the rotation turned the other way (angle +ω per pair): q_i is the code of position i + 1. W_V copies the part of speech of the next word.',
    typical: 'in trained encoders (BERT), heads that attend to the next token are as common as previous-token heads; they let a word see what it leads into, e.g. a determiner sees its noun.',
  },
  {
    short: 'Same class', name: 'Semantic: same meaning class',
    focus: 'every token of the same coarse meaning class (people, animals, things, places, time, actions, qualities, function words), itself included.',
    how: `W_Q and W_K both read the one-hot semantic-class block; q·k is S = ${SHARPNESS.sameClass} when two tokens share a class and 0 otherwise, so each row spreads evenly over its class-mates. W_V copies the part of speech (folded into 8 numbers).`,
    typical: 'in trained models, some heads link words with related meanings (cat ↔ dog, morning ↔ evening) because their embeddings lie close together; this head makes that similarity exact by using a class label.',
  },
  {
    short: 'Verb → subject', name: 'Syntactic: verb → its subject',
    focus: 'the subject of each verb (the head noun of the subject\'s chunk), as the tagger\'s parse gives it.',
    how: `The tagger's parse gives every noun chunk an id; its head noun carries the id as a 6-number code (noun id), and each verb carries the code of its subject\'s chunk (subject id). W_Q reads a verb\'s subject id, W_K reads every token\'s noun id: the dot product is 1 for the right noun and at most 0.44 for any other, times S = ${SHARPNESS.subject}. A query bias paired with the first-token flag in W_K gives every row a fallback of ${SHARPNESS.fallbackSink} logits on the first token, so rows with nothing to find rest there. W_V copies the subject's number and gender (and whether it is a person, animal or thing): what a verb needs for agreement.`,
    typical: 'in trained models, e.g. BERT, individual heads track subjects of verbs, direct objects and other dependency relations with high accuracy (Clark et al., 2019), although no one told them what syntax is.',
  },
  {
    short: 'Pronoun → noun', name: 'Coreference: pronoun → noun',
    focus: 'the noun each third-person pronoun (it, she, him, their …) stands for: a noun of matching gender and number, preferably a subject.',
    how: `Nouns carry their gender and number in one block (noun agreement), third-person pronouns in another (pronoun agreement). W_Q reads the pronoun block, W_K the noun block: a noun scores +${SHARPNESS.agreement} when its number matches, +${SHARPNESS.agreement} when its gender matches and −${SHARPNESS.genderMismatch} when it has another gender ("they" has none, so only number counts). A second query dimension, fed by the pronoun's number, meets the subject flag in W_K (+${SHARPNESS.subjectBonus} logits), so "it" goes to "the cat" (the subject) rather than "the mat". Other rows fall back to the first token (${SHARPNESS.fallbackSink} logits). W_V copies the noun's semantic class: the pronoun learns what it stands for.`,
    typical: 'in trained models, coreference heads link pronouns to their antecedents; they are found in the middle layers of BERT and GPT-2 and are one reason the model "knows" who "she" is.',
  },
  {
    short: 'Modifier → noun', name: 'Syntactic: modifier → noun',
    focus: 'the noun that each determiner, adjective, number or possessive describes, as the tagger\'s parse gives it; a predicative adjective ("was tired") looks at the subject.',
    how: 'The same keys as head 4 (the noun id on each head noun), a different query: W_Q reads the modified id, which the parse gives to each modifier. Two heads sharing keys but asking different questions is exactly what W_Q is for. W_V copies the noun\'s semantic class.',
    typical: 'in trained models, heads that join determiners and adjectives to their nouns (and possessives to the possessed) are among the most reliable syntactic heads.',
  },
  {
    short: 'First-token sink', name: 'No-op: first-token sink',
    focus: 'the first token, from every position.',
    how: `W_Q is zero; a query bias of S = ${SHARPNESS.sink} meets the first-token flag in W_K, so every score is 0 except ${SHARPNESS.sink} on the first token. W_V copies only the first-token flag, so the head writes (almost) the same vector everywhere: it does nothing, on purpose.`,
    typical: 'in trained models, many heads send most of their weight to the first token (or to [CLS]/[SEP]) when they have nothing to do: an "attention sink" that acts as a no-op (Xiao et al., 2023).',
  },
  {
    short: 'Broad average', name: 'Broad: averaging over the sentence',
    focus: 'all tokens equally: a summary of the whole sentence.',
    how: 'W_Q and W_K are zero, so every score is 0 and the softmax of equal scores is uniform: 1/L on each token. W_V copies the semantic-class block, so the output is the sentence\'s mix of meaning classes, the same for every position.',
    typical: 'in trained models, broad heads with high entropy are common in the first layers; they gather a bag-of-words context that later layers refine.',
  },
];

/** Build the designed state_dict: { name: { data: Float32Array, shape } } in PyTorch names. */
export function designedStateDict() {
  const E = D_MODEL;
  const inProjWeight = new Float32Array(3 * E * E); // rows: W_Q (0..E), W_K (E..2E), W_V (2E..3E)
  const inProjBias = new Float32Array(3 * E);
  const outProjWeight = new Float32Array(E * E);
  const outProjBias = new Float32Array(E);
  const scale = Math.sqrt(HEAD_DIM);
  // row r of W_Q / W_K / W_V for head h, head dimension d
  /** @typedef {(h: number, d: number, feature: number, value: number) => void} Setter */
  /** @type {Setter} */
  const q = (h, d, feature, value) => { inProjWeight[(h * HEAD_DIM + d) * E + feature] = value; };
  /** @type {Setter} */
  const k = (h, d, feature, value) => { inProjWeight[(E + h * HEAD_DIM + d) * E + feature] = value; };
  /** @type {Setter} */
  const v = (h, d, feature, value) => { inProjWeight[(2 * E + h * HEAD_DIM + d) * E + feature] = value; };
  const qBias = (/** @type {number} */ h, /** @type {number} */ d, /** @type {number} */ value) => { inProjBias[h * HEAD_DIM + d] = value; };
  /** @param {Setter} setter @param {number} h @param {number} firstHeadDim @param {[number, number]} block  [start, width] @param {number} [factor] */
  const copyBlock = (setter, h, firstHeadDim, [start, width], factor = 1) => {
    for (let c = 0; c < width && firstHeadDim + c < HEAD_DIM; c += 1) setter(h, firstHeadDim + c, start + c, factor);
  };
  const sinkFallback = (/** @type {number} */ h, /** @type {number} */ d, /** @type {number} */ logit) => {
    qBias(h, d, scale * logit);
    k(h, d, LAYOUT.firstToken[0], 1);
  };

  // W_V of heads 1-3: the part of speech folded into 8 numbers (noun, pronoun, verb, adjective,
  // adverb, determiner or number, preposition, conjunction or other) plus punctuation.
  const POS_SUMMARY = [['NOUN', 'PROPN'], ['PRON'], ['VERB'], ['ADJ'], ['ADV'], ['DET', 'NUM'], ['ADP'], ['CONJ', 'OTHER']];
  const copyPosSummary = (/** @type {number} */ h) => {
    POS_SUMMARY.forEach((tags, d) => tags.forEach((tag) => v(h, d, LAYOUT.pos[0] + POS_TAGS.indexOf(tag), 1)));
    v(h, 7, LAYOUT.punctuation[0], 1);
  };

  // Heads 1 and 2: position code rotated by -ω (previous token) or +ω (next token).
  [[0, -1], [1, +1]].forEach(([h, direction]) => {
    const factor = (scale * SHARPNESS.position) / POSITION_FREQUENCIES.length;
    POSITION_FREQUENCIES.forEach((w, f) => {
      const c = Math.cos(w), s = Math.sin(w) * -direction; // rotation by direction·ω
      // q = R(direction·ω) p: [cos(a + dω), sin(a + dω)]
      q(h, 2 * f, 2 * f, factor * c); q(h, 2 * f, 2 * f + 1, factor * s);
      q(h, 2 * f + 1, 2 * f, -factor * s); q(h, 2 * f + 1, 2 * f + 1, factor * c);
      k(h, 2 * f, 2 * f, 1); k(h, 2 * f + 1, 2 * f + 1, 1);
    });
    copyPosSummary(h);
  });

  // Head 3: same semantic class.
  copyBlock(q, 2, 0, LAYOUT.semanticClass, scale * SHARPNESS.sameClass);
  copyBlock(k, 2, 0, LAYOUT.semanticClass, 1);
  copyPosSummary(2);

  // Head 4: verb -> subject. q reads the subject id, k the noun id.
  copyBlock(q, 3, 0, LAYOUT.subjectId, scale * SHARPNESS.subject);
  copyBlock(k, 3, 0, LAYOUT.nounId, 1);
  sinkFallback(3, 7, SHARPNESS.fallbackSink);
  copyBlock(v, 3, 0, LAYOUT.nounAgreement);
  copyBlock(v, 3, 5, [LAYOUT.semanticClass[0], 3]); // person, animal, thing

  // Head 5: pronoun -> noun of matching gender and number, subjects preferred.
  // gender: +S for the pronoun's own gender, -S/2 for each other one; number: +S when equal
  for (let g = 0; g < 3; g += 1) {
    for (let pg = 0; pg < 3; pg += 1) {
      q(4, g, LAYOUT.pronounAgreement[0] + pg, scale * (g === pg ? SHARPNESS.agreement : -SHARPNESS.genderMismatch));
    }
  }
  for (let n = 3; n < 5; n += 1) q(4, n, LAYOUT.pronounAgreement[0] + n, scale * SHARPNESS.agreement);
  copyBlock(k, 4, 0, LAYOUT.nounAgreement, 1);
  q(4, 5, LAYOUT.pronounAgreement[0] + 3, scale * SHARPNESS.subjectBonus); // sg
  q(4, 5, LAYOUT.pronounAgreement[0] + 4, scale * SHARPNESS.subjectBonus); // pl
  k(4, 5, LAYOUT.subject[0], 1);
  sinkFallback(4, 7, SHARPNESS.fallbackSink);
  copyBlock(v, 4, 0, LAYOUT.semanticClass);

  // Head 6: modifier -> noun. Same keys as head 4, another query.
  copyBlock(q, 5, 0, LAYOUT.modifiedId, scale * SHARPNESS.modifier);
  copyBlock(k, 5, 0, LAYOUT.nounId, 1);
  sinkFallback(5, 7, SHARPNESS.fallbackSink);
  copyBlock(v, 5, 0, LAYOUT.semanticClass);

  // Head 7: first-token sink.
  sinkFallback(6, 0, SHARPNESS.sink);
  v(6, 0, LAYOUT.firstToken[0], 1);

  // Head 8: broad average. W_Q = W_K = 0.
  copyBlock(v, 7, 0, LAYOUT.semanticClass);

  // W_O: each head writes into its own 8-dimensional slot of the output (as Tracr does).
  for (let r = 0; r < E; r += 1) outProjWeight[r * E + r] = 1;

  return {
    in_proj_weight: { data: inProjWeight, shape: [3 * E, E] },
    in_proj_bias: { data: inProjBias, shape: [3 * E] },
    'out_proj.weight': { data: outProjWeight, shape: [E, E] },
    'out_proj.bias': { data: outProjBias, shape: [E] },
  };
}
