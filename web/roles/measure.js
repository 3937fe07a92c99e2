// Measure a model's heads on sentences with evaluate.js's rule: the pretrained encoder on the
// annotated data or a corpus file, the trained model on its grammar's sentences. The page, the
// element and `npm run roles` (scripts/commands/roles.js) all call these. In a page, the loops
// let the page answer between sentences and the rule's bootstrap runs in a Web Worker
// (measure-worker.js), so that measuring never holds the page for long.
import { measureHead } from './evaluate.js';
import { dataSentences, onPieces, corpusSentence } from './sentences.js';
import { evaluateAway, pageBreaks } from './measure-worker.js';

/** Where the annotated data and the measured tables live, beside the page (these URLs hold from web/roles/ and from the bundle in web/lib/). */
export const DATA_URL = new URL('../data/roles/', import.meta.url);
export const PRETRAINED_ROLES_URL = new URL('../data/roles/pretrained-roles.json', import.meta.url);
export const TRAINED_ROLES_URL = new URL('../data/roles/trained-roles.json', import.meta.url);

/** @typedef {import('./evaluate.js').Sentence} Sentence */
/** @typedef {import('../sources/source.js').HeadRoles} HeadRoles */
/** @typedef {import('../sources/source.js').MeasureProgress} MeasureProgress */
/** @typedef {{ layer: number, head: number, measured: ReturnType<typeof measureHead>[] }} MeasuredHead */
/** A file of the annotated data by name (its parsed JSON). @typedef {(name: string) => Promise<any>} DataReader */
/**
 * What the heads are measured from: a text's pieces, the word of each (as the model's tokenizer
 * groups them) and each layer's attention weights (H, T, T).
 * @typedef {Pick<import('../lib/encoder.js').EncodeResult, 'pieces' | 'words'> & { layers: { weights: import('../lib/index.js').Tensor }[] }} Encoding
 */

/**
 * Encode each sentence with the pretrained encoder (web/lib/encoder.js) and measure every head.
 * @param {{ encode(text: string): Promise<Encoding> | Encoding }} encoder  loadEncoder's result, or a model's reading of a text
 * @param {(import('./sentences.js').DataSentence | import('./sentences.js').CorpusItem)[]} sentences  dataSentences' (no tokens yet), or corpus items (with `corpus`)
 * @param {{ corpus?: boolean, tagged?: (text: string) => Promise<import('../sources/tokens.js').Token[] | null>, onProgress?: MeasureProgress, evidence?: boolean, causal?: boolean }} [o]
 *   causal: the model's rows see only the tokens up to their own (a decoder), which the rule takes into account
 * @returns {Promise<HeadRoles>}
 */
export async function measurePretrained(encoder, sentences, { corpus = false, tagged, onProgress, evidence = false, causal = false } = {}) {
  /** @type {Sentence[]} */
  const kept = [];
  /** @type {string[]} */
  const skipped = [];
  /** @type {MeasuredHead[] | null} */
  let heads = null;
  const pause = pageBreaks();
  for (let i = 0; i < sentences.length; i += 1) {
    await pause();
    const item = sentences[i];
    const encoding = await encoder.encode(item.text);
    // corpus: the items are corpus lines, else annotated sentences
    const s = corpus
      ? corpusSentence(/** @type {import('./sentences.js').CorpusItem} */ (item), encoding, tagged ? await tagged(item.text) : null)
      : onPieces(/** @type {import('./sentences.js').DataSentence} */ (item), encoding);
    if (!s) { skipped.push(/** @type {import('./sentences.js').DataSentence} */ (item).id); continue; }
    kept.push(s);
    const layers = encoding.layers.map((layer) => layer.weights);
    if (!heads) heads = layers.flatMap((w, layer) => Array.from({ length: w.shape[0] }, (_, head) => ({ layer, head, measured: /** @type {MeasuredHead['measured']} */ ([]) })));
    for (const entry of heads) {
      const w = layers[entry.layer];
      const T = w.shape[1];
      entry.measured.push(measureHead(w.data.subarray(entry.head * T * T, (entry.head + 1) * T * T), s, causal));
    }
    onProgress?.({ done: i + 1, total: sentences.length });
  }
  const result = await evaluateAway(kept, heads ?? [], { evidence, causal });
  result.corpus.skipped = skipped;
  return result;
}

/** A file of the annotated data, fetched from beside the page (a `read` for the functions below). @param {string} name */
export async function fetchData(name) {
  const url = new URL(name, DATA_URL);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The evaluation data could not be loaded from ${url.pathname}: HTTP ${response.status}.`);
  return response.json();
}

/** The annotated data (pronouns.json, relations.json) as evaluate.js's sentences, read by `read(name)`. @param {DataReader} read */
export async function annotatedSentences(read) {
  const [pronouns, relations] = await Promise.all([read('pronouns.json'), read('relations.json')]);
  return dataSentences(pronouns, relations);
}

/**
 * A model's table on the annotated data, the way `npm run roles` writes it for the pretrained model.
 * @param {Parameters<typeof measurePretrained>[0]} encoder
 * @param {DataReader} read
 * @param {{ onProgress?: MeasureProgress, evidence?: boolean, causal?: boolean, source?: 'pretrained' | 'model' }} [options]
 *   causal: a decoder's heads (see measurePretrained); source: what the table says measured it
 * @returns {Promise<HeadRoles>}
 */
export async function pretrainedRoles(encoder, read, { onProgress, evidence = true, causal = false, source = 'pretrained' } = {}) {
  const sentences = await annotatedSentences(read);
  return { source, ...(await measurePretrained(encoder, sentences, { onProgress, evidence, causal })) };
}

/** The trained model's sentences: its grammar's, from these seeds (even seeds dev, odd test). */
export const TRAINED_SEEDS = { first: 10000, count: 600 };

// The grammar's nouns: gender from the word, plural the second of each pair (grammar.cpp), for
// the agreeing-noun baseline.
/** @type {Record<string, string>} */
const GRAMMAR_NOUNS = {
  man: 'm', men: 'm', boy: 'm', boys: 'm', king: 'm', kings: 'm', woman: 'f', women: 'f', girl: 'f', girls: 'f',
  queen: 'f', queens: 'f', dog: 'n', dogs: 'n', cat: 'n', cats: 'n', box: 'n', boxes: 'n',
};
const GRAMMAR_PLURALS = new Set(['men', 'boys', 'kings', 'women', 'girls', 'queens', 'dogs', 'cats', 'boxes']);
const grammarAgrees = (/** @type {string} */ pronoun, /** @type {string} */ noun) => {
  const gender = GRAMMAR_NOUNS[noun];
  if (!gender) return false;
  if (pronoun === 'they') return GRAMMAR_PLURALS.has(noun);
  if (GRAMMAR_PLURALS.has(noun)) return false;
  return /** @type {Record<string, string>} */ ({ he: 'm', she: 'f', it: 'n' })[pronoun] === gender;
};

// Where a causal model needs a relation: a next-token predictor fetches a verb's subject and a
// pronoun's antecedent at the token before the word (where it predicts the verb's number, or
// the pronoun), so those instances are measured there; the others at the link's own query.
/** @type {Record<string, number>} */
const ASKED_AT = { verbSubject: -1, pronounAntecedent: -1 };

/**
 * A grammar sentence (Trainer.sentence) as evaluate.js's sentence: one token per word, <bos>
 * first; the grammar's links as instances (the previous-token link is the `previous` role), the
 * keys of one query together (a noun's determiner and adjective: either counts), queries moved
 * by ASKED_AT.
 * @param {{ words: string[], tokens: number[], links: { relation: string, query: number, key: number }[] }} grammar
 * @param {string[]} categories  each vocabulary word's category
 * @param {number} seed
 * @returns {Sentence}
 */
export function grammarSentence(grammar, categories, seed) {
  const words = grammar.words;
  /** @type {Map<string, Sentence['instances'][number]>} */
  const byQuery = new Map();
  for (const link of grammar.links) {
    if (link.relation === 'previous') continue;
    const query = link.query + (ASKED_AT[link.relation] ?? 0);
    if (query <= link.key) continue; // asked at the key itself: the rule never picks a query's own word
    const k = `${link.relation} ${query}`;
    let inst = byQuery.get(k);
    if (!inst) byQuery.set(k, (inst = { relation: link.relation, query, keys: [] }));
    inst.keys.push(link.key);
  }
  const nominal = grammar.tokens.map((t) => categories[t] === 'noun');
  const instances = [...byQuery.values()].map((inst) => (inst.relation === 'pronounAntecedent'
    ? { ...inst, agreeing: words.flatMap((w, b) => (b < inst.query && nominal[b] && grammarAgrees(words[inst.query + 1], w) ? [b] : [])) }
    : inst));
  return {
    id: `seed ${seed}`, split: seed % 2 ? 'test' : 'dev', text: words.filter((w) => w !== '<bos>').join(' '),
    words, tokens: words, tokenWord: words.map((_, i) => i), nominal,
    subjects: [...new Set(grammar.links.filter((l) => l.relation === 'verbSubject').map((l) => l.key))], instances,
  };
}

/**
 * The trained model's table: its attention maps (Trainer.attention, the training core) on the
 * grammar's sentences of TRAINED_SEEDS, causal, by the same rule.
 * @param {import('../lib/train.js').Trainer} trainer  with its weights loaded
 * @param {{ seeds?: { first: number, count: number }, onProgress?: MeasureProgress, evidence?: boolean }} [options]
 * @returns {Promise<HeadRoles>}
 */
export async function trainedRoles(trainer, { seeds = TRAINED_SEEDS, onProgress, evidence = false } = {}) {
  const categories = trainer.categories;
  /** @type {Sentence[]} */
  const sentences = [];
  /** @type {MeasuredHead[]} */
  const heads = [];
  const pause = pageBreaks();
  for (let n = 0; n < seeds.count; n += 1) {
    await pause();
    const seed = seeds.first + n;
    const grammar = trainer.sentence(seed);
    const s = grammarSentence(grammar, categories, seed);
    sentences.push(s);
    const maps = trainer.attention(grammar);
    const [L, H, T] = maps.shape;
    if (!heads.length) for (let l = 0; l < L; l += 1) for (let h = 0; h < H; h += 1) heads.push({ layer: l, head: h, measured: [] });
    for (const entry of heads) {
      const offset = (entry.layer * H + entry.head) * T * T;
      entry.measured.push(measureHead(maps.data.subarray(offset, offset + T * T), s, true));
    }
    onProgress?.({ done: n + 1, total: seeds.count });
  }
  return { source: 'trained', ...(await evaluateAway(sentences, heads, { causal: true, evidence })) };
}

/** The held-out sentences of the trained model's mean weights (Trainer.evaluate), as the train view scores them. */
export const TRAINED_HELD_OUT = 300;

/**
 * The trained model's table as the page reads it (web/data/roles/trained-roles.json, written by
 * `npm run roles -- --source trained --write`): its heads by the rule, with the items behind each
 * relation, and the core's mean weight of every head on every relation over TRAINED_HELD_OUT
 * held-out sentences (heldOut).
 * @param {import('../lib/train.js').Trainer} trainer  made with heldOut: TRAINED_HELD_OUT, its weights loaded
 * @param {{ onProgress?: MeasureProgress }} [options]
 * @returns {Promise<HeadRoles>}
 */
export async function trainedTable(trainer, { onProgress } = {}) {
  if (trainer.settings.heldOut !== TRAINED_HELD_OUT) {
    throw new Error(`trainedTable: expected a trainer with heldOut ${TRAINED_HELD_OUT}, got ${trainer.settings.heldOut}`);
  }
  const roles = await trainedRoles(trainer, { onProgress, evidence: true });
  const { sentences, heads } = trainer.evaluate();
  return { ...roles, heldOut: { sentences, heads } };
}

/**
 * Heads over the lesson's token features (a weights file, web/sources/file.js): each annotated
 * sentence tagged and embedded as the page does it (source.sentence), its maps computed by the
 * core (source.compute); a sentence whose tagger tokens are not its words is left out.
 * @param {Pick<import('../sources/token-features.js').TokenFeatureSource, 'sentence' | 'compute'>} source  a TokenFeatureSource, loaded
 * @param {DataReader} read
 * @param {{ onProgress?: MeasureProgress, evidence?: boolean }} [options]
 * @returns {Promise<HeadRoles>}
 */
export async function tokenFeatureRoles(source, read, { onProgress, evidence = true } = {}) {
  const sentences = await annotatedSentences(read);
  /** @type {Sentence[]} */
  const kept = [];
  /** @type {string[]} */
  const skipped = [];
  /** @type {MeasuredHead[]} */
  const heads = [];
  const pause = pageBreaks();
  for (let i = 0; i < sentences.length; i += 1) {
    await pause();
    const item = sentences[i];
    const shown = await source.sentence(item.text);
    const texts = shown.tokens.map((t) => t.text);
    if (texts.length !== item.words.length || texts.some((t, k) => t.toLowerCase() !== item.words[k].toLowerCase())) {
      skipped.push(item.id);
    } else {
      const s = { ...item, tokens: texts, tokenWord: texts.map((_, k) => k) };
      kept.push(s);
      const { weights } = await source.compute(shown, { parts: false });
      const [H, T] = weights.shape;
      if (!heads.length) for (let h = 0; h < H; h += 1) heads.push({ layer: 0, head: h, measured: [] });
      for (const entry of heads) entry.measured.push(measureHead(weights.data.subarray(entry.head * T * T, (entry.head + 1) * T * T), s, false));
    }
    onProgress?.({ done: i + 1, total: sentences.length });
  }
  const result = await evaluateAway(kept, heads, { evidence });
  result.corpus.skipped = skipped;
  return { source: 'file', ...result };
}
