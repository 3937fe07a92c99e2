// What each head of a pretrained model does, measured over a corpus as Clark et al. (2019) did for
// BERT ("What does BERT look at?"). From the core's attention weights of every sentence:
//
//   roles, over the model's pieces: each head's mean share of a query row on the previous piece,
//     the next piece, itself, the first piece, the sentence's final punctuation, and the other
//     pieces of its own word (words as the core's tokenizer groups pieces);
//   relations, over words (the page's tagger finds them; pronouns are annotated in the corpus):
//     determiner or adjective → its noun, verb → its subject, pronoun → its antecedent. A head's
//     word-level map (a query word's pieces averaged, a key word's pieces summed) predicts the
//     key word it weights most; its accuracy is set against the best fixed-offset baseline
//     ("always the word k places away", the best k for the relation).
//
// A head is labelled by a role when its mean share clears ROLE_THRESHOLD, by a relation when its
// accuracy clears RELATION_THRESHOLD and beats the baseline; otherwise it is broad (its rows are
// near uniform: mean normalised entropy above BROAD_ENTROPY) or mixed.

export const ROLES = ['previous', 'next', 'self', 'first', 'finalPunctuation', 'sameWord'];
export const ROLE_NAMES = {
  previous: 'previous piece', next: 'next piece', self: 'itself', first: 'first piece',
  finalPunctuation: 'final punctuation', sameWord: 'its own word',
};
export const RELATIONS = ['modifierNoun', 'verbSubject', 'pronounAntecedent'];
export const RELATION_NAMES = {
  modifierNoun: 'modifier → noun', verbSubject: 'verb → subject', pronounAntecedent: 'pronoun → antecedent',
};
export const ROLE_THRESHOLD = 0.5;
export const RELATION_THRESHOLD = 0.4;
export const BROAD_ENTROPY = 0.8;
const MAX_OFFSET = 6;

const isPunctuation = (text) => /^[\p{P}\p{S}]+$/u.test(text);

/** The text of a piece as shown: SentencePiece's word marker "▁" dropped. */
export function pieceText(piece) {
  return piece.replace(/^▁/, '') || piece;
}

/**
 * The pieces of each tagged token, by walking both texts character by character (case and
 * spaces aside). Returns piece indices per token, or null when the two do not line up.
 */
export function alignTokens(pieces, tokens) {
  const pieceChars = [];
  pieces.forEach((piece, p) => { for (const c of pieceText(piece).replace(/▁/g, '').toLowerCase()) pieceChars.push([c, p]); });
  const groups = tokens.map(() => new Set());
  let k = 0;
  for (let t = 0; t < tokens.length; t += 1) {
    for (const c of tokens[t].text.replace(/\s+/g, '').toLowerCase()) {
      if (k >= pieceChars.length || pieceChars[k][0] !== c) return null;
      groups[t].add(pieceChars[k][1]);
      k += 1;
    }
  }
  if (k !== pieceChars.length) return null;
  return groups.map((g) => [...g]);
}

/**
 * A head's mean share on each role over the rows of one (T, T) map; `words` is the word index of
 * each piece, as the model's tokenizer groups them (the encoder's `words`).
 */
export function roleShares(map, pieces, words) {
  const T = pieces.length;
  const last = T - 1;
  const endsInPunctuation = T > 1 && isPunctuation(pieceText(pieces[last]));
  const sums = { previous: 0, next: 0, self: 0, first: 0, finalPunctuation: 0, sameWord: 0 };
  const rows = { previous: 0, next: 0, self: 0, first: 0, finalPunctuation: 0, sameWord: 0 };
  for (let i = 0; i < T; i += 1) {
    const row = map.subarray(i * T, (i + 1) * T);
    const add = (role, value) => { sums[role] += value; rows[role] += 1; };
    if (i > 0) add('previous', row[i - 1]);
    if (i < last) add('next', row[i + 1]);
    add('self', row[i]);
    if (i > 0) add('first', row[0]);
    if (endsInPunctuation && i !== last) add('finalPunctuation', row[last]);
    let same = 0;
    let others = 0;
    for (let j = 0; j < T; j += 1) if (j !== i && words[j] === words[i]) { same += row[j]; others += 1; }
    if (others) add('sameWord', same);
  }
  return { sums, rows };
}

/** Word-level map (W × W): a query word's pieces averaged, a key word's pieces summed. */
export function wordMap(map, T, groups) {
  const W = groups.length;
  const out = new Float64Array(W * W);
  groups.forEach((queryPieces, a) => {
    for (const i of queryPieces) {
      groups.forEach((keyPieces, b) => {
        let s = 0;
        for (const j of keyPieces) s += map[i * T + j];
        out[a * W + b] += s / queryPieces.length;
      });
    }
  });
  return out;
}

/** The relations a tagged sentence holds: { relation, query, key } word pairs. */
export function relationsOf(tokens, annotation = {}) {
  const found = [];
  tokens.forEach((t, i) => {
    if ((t.pos === 'DET' || t.pos === 'ADJ') && t.modifies >= 0 && t.modifies !== i) found.push({ relation: 'modifierNoun', query: i, key: t.modifies });
    if (t.pos === 'VERB' && t.subject >= 0 && t.subject !== i) found.push({ relation: 'verbSubject', query: i, key: t.subject });
  });
  if (annotation.pronoun && annotation.antecedent) {
    const key = tokens.findIndex((t) => t.text.toLowerCase() === annotation.antecedent.toLowerCase());
    const query = tokens.findIndex((t, i) => i > key && t.text.toLowerCase() === annotation.pronoun.toLowerCase());
    if (key >= 0 && query > key) found.push({ relation: 'pronounAntecedent', query, key });
  }
  return found;
}

function argmaxRow(values, W, a) {
  let best = 0;
  for (let b = 1; b < W; b += 1) if (values[a * W + b] > values[a * W + best]) best = b;
  return best;
}

/**
 * Measure every head over a corpus.
 * @param {{ pieces: string[], words: number[], layers: { data: Float32Array, shape: number[] }[], tokens?: object[], relations?: object[] }[]} sentences
 *   words: the word index of each piece, from the core's tokenizer;
 *   layers[l]: that layer's per-head weights (H, T, T), from the core; tokens: the tagged words
 *   (web/sources/tokens.js) and relations (relationsOf) where the sentence was tagged
 * @param {{ normalizedEntropy: number }[][]} entropies  per layer, per head: the core's statistics over the corpus
 */
export function measureHeads(sentences, entropies) {
  const numLayers = sentences[0].layers.length;
  const numHeads = sentences[0].layers[0].shape[0];
  const heads = [];
  for (let l = 0; l < numLayers; l += 1) {
    for (let h = 0; h < numHeads; h += 1) {
      heads.push({ layer: l, head: h, sums: Object.fromEntries(ROLES.map((r) => [r, 0])), rows: Object.fromEntries(ROLES.map((r) => [r, 0])),
        hits: Object.fromEntries(RELATIONS.map((r) => [r, 0])), normalizedEntropy: entropies[l][h].normalizedEntropy });
    }
  }
  const counts = Object.fromEntries(RELATIONS.map((r) => [r, 0]));
  const offsetHits = Object.fromEntries(RELATIONS.map((r) => [r, new Map()]));
  let aligned = 0;
  for (const s of sentences) {
    const T = s.pieces.length;
    const groups = s.tokens ? alignTokens(s.pieces, s.tokens) : null;
    if (groups) {
      aligned += 1;
      for (const rel of s.relations) {
        counts[rel.relation] += 1;
        const k = rel.key - rel.query;
        if (Math.abs(k) <= MAX_OFFSET) offsetHits[rel.relation].set(k, (offsetHits[rel.relation].get(k) ?? 0) + 1);
      }
    }
    for (const entry of heads) {
      const weights = s.layers[entry.layer];
      const map = weights.data.subarray(entry.head * T * T, (entry.head + 1) * T * T);
      const { sums, rows } = roleShares(map, s.pieces, s.words);
      for (const r of ROLES) { entry.sums[r] += sums[r]; entry.rows[r] += rows[r]; }
      if (!groups) continue;
      const W = groups.length;
      const words = wordMap(map, T, groups);
      for (const rel of s.relations) if (argmaxRow(words, W, rel.query) === rel.key) entry.hits[rel.relation] += 1;
    }
  }
  const baselines = Object.fromEntries(RELATIONS.map((r) => {
    let best = { offset: 0, accuracy: 0 };
    for (const [offset, hits] of offsetHits[r]) if (counts[r] && hits / counts[r] > best.accuracy) best = { offset, accuracy: hits / counts[r] };
    return [r, { ...best, count: counts[r] }];
  }));
  const table = heads.map((entry) => {
    const roles = Object.fromEntries(ROLES.map((r) => [r, entry.rows[r] ? entry.sums[r] / entry.rows[r] : 0]));
    const relations = Object.fromEntries(RELATIONS.map((r) => [r, counts[r] ? entry.hits[r] / counts[r] : 0]));
    return { layer: entry.layer, head: entry.head, roles, relations, normalizedEntropy: entry.normalizedEntropy, ...labelOf(roles, relations, baselines, entry.normalizedEntropy) };
  });
  return { heads: table, baselines, sentences: sentences.length, aligned };
}

/** A head's label: its strongest role or relation that clears the bar, else broad or mixed. */
function labelOf(roles, relations, baselines, normalizedEntropy) {
  const candidates = [];
  for (const r of ROLES) if (roles[r] >= ROLE_THRESHOLD) candidates.push({ kind: 'role', name: r, score: roles[r], margin: roles[r] - ROLE_THRESHOLD });
  for (const r of RELATIONS) {
    if (relations[r] >= RELATION_THRESHOLD && relations[r] > baselines[r].accuracy) {
      candidates.push({ kind: 'relation', name: r, score: relations[r], margin: relations[r] - Math.max(RELATION_THRESHOLD, baselines[r].accuracy) });
    }
  }
  if (candidates.length) {
    const best = candidates.reduce((a, b) => (b.margin > a.margin ? b : a));
    return { label: best.kind === 'role' ? ROLE_NAMES[best.name] : RELATION_NAMES[best.name], kind: best.kind, role: best.name, score: best.score };
  }
  return normalizedEntropy > BROAD_ENTROPY
    ? { label: 'broad', kind: 'broad', role: null, score: normalizedEntropy }
    : { label: 'mixed', kind: 'mixed', role: null, score: null };
}
