// The explorer's state as a link, so that a link opens the same view:
//
//   ?source=random&seed=3&sentence=The%20dog%20ran.&head=5&compare=5,2&layer=1&view=compare
//   ?model=openai-community/gpt2&layer=3          a model on the Hugging Face Hub (endpoint=URL: a mirror;
//                                                 tokenize-time-limit=MS: how long its tokenizer may take on a text)
//   ?model=…&sentence=Once&write=20&temperature=0.8&top-k=40&write-seed=7
//                                                 a causal model writes 20 tokens after the sentence: the most
//                                                 probable, or drawn with temperature, top-k and write-seed
//
// source (designed | random | trained | pretrained; a weights file or a model folder cannot come from a link),
// seed (random), layer, sentence (an example or typed text), head (the selected head, from 1),
// compare (heads A and B, from 1), view (the part of the explorer in view). readLink turns a
// query into what setState takes (controller.js) and the problems it already sees; followLink
// applies it through the controller, which checks the rest against the source; linkOf writes the
// state back. A parameter that is bad or hostile gives a message and its default.

import { MAX_SEED, SOURCE_IDS, hubRepoOf, hubSpec } from './sources.js';
import { tokenizeTimeLimitOf } from './tokenize-limit.js';

/** @typedef {import('./controller.js').Explorer} Explorer */
/** @typedef {import('./controller.js').WantedState} WantedState */

export const LINK_PARAMETERS = ['source', 'seed', 'model', 'endpoint', 'tokenize-time-limit', 'layer', 'sentence', 'head', 'compare', 'view', 'write', 'temperature', 'top-k', 'write-seed'];
export const MAX_SENTENCE = 600;

/** Integer n with min <= n <= max from a parameter, or null. @param {string} text @param {number} min @param {number} max */
function integer(text, min, max) {
  if (!/^\d{1,10}$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

const quoted = (/** @type {unknown} */ value) => JSON.stringify(String(value).slice(0, 80));

/**
 * What a query asks for, as setState's fields (0-based heads), and the problems of its syntax.
 * @param {URLSearchParams} params
 * @returns {{ want: WantedState, problems: string[] }}
 */
export function readLink(params) {
  /** @type {string[]} */
  const problems = [];
  /** @type {WantedState} */
  const want = { source: { id: 'designed' }, sentence: 0, head: 0, pair: [0, 1], view: null };
  const bad = (/** @type {string} */ name, /** @type {string} */ expected) => problems.push(`${name}=${quoted(params.get(name))} is not ${expected}; showing the default`);
  for (const name of new Set(params.keys())) if (!LINK_PARAMETERS.includes(name)) problems.push(`the parameter ${JSON.stringify(name.slice(0, 40))} is not one this page reads`);

  let id = params.get('source') ?? 'designed';
  if (!SOURCE_IDS.includes(id)) { bad('source', `one of ${SOURCE_IDS.join(', ')}`); id = 'designed'; }
  if (id === 'file') { problems.push('a weights file cannot be opened from a link (load it again); showing the designed heads'); id = 'designed'; }
  if (id === 'model') {
    problems.push(`a model you opened cannot be opened from a link (open its folder again${params.has('write') ? ': what it wrote is written again then' : ''}); showing the designed heads`);
    id = 'designed';
  }
  if (id === 'random') {
    const seed = params.has('seed') ? integer(params.get('seed') ?? '', 0, MAX_SEED) : 0;
    if (seed === null) bad('seed', `a whole number from 0 to ${MAX_SEED}`);
    want.source = { id, seed: seed ?? 0 };
  } else {
    want.source = /** @type {import('./sources.js').SourceSpec} */ ({ id }); // one of SOURCE_IDS without options
  }
  const hubModel = params.get('model');
  if (hubModel !== null) {
    try {
      want.source = hubSpec(hubModel, params.get('endpoint'), tokenizeTimeLimitOf(params.get('tokenize-time-limit')));
    } catch (error) {
      problems.push(`${error instanceof Error ? error.message : String(error)}; showing the default`);
    }
  } else {
    for (const name of ['endpoint', 'tokenize-time-limit']) if (params.has(name)) problems.push(`${name}= is read only with model=`);
  }
  if (params.has('layer')) {
    const text = params.get('layer') ?? '';
    const layer = integer(text, 0, 1000);
    want.layer = layer === null ? text : layer; // the controller knows the source's layers
  } else {
    want.layer = 0;
  }
  const text = params.get('sentence');
  if (text !== null && text.length > MAX_SENTENCE) bad('sentence', `a sentence of at most ${MAX_SENTENCE} characters`);
  else if (text !== null && text.trim()) want.sentence = text;
  if (params.has('head')) {
    const head = integer(params.get('head') ?? '', 1, 1000);
    want.head = head === null ? params.get('head') : head - 1;
  }
  if (params.has('compare')) {
    const parts = (params.get('compare') ?? '').split(',');
    const heads = parts.map((p) => integer(p, 1, 1000));
    want.pair = parts.length === 2 && !heads.includes(null) ? heads.map((h) => /** @type {number} */ (h) - 1) : params.get('compare');
  }
  if (params.has('view')) want.view = params.get('view');
  const write = readWrite(params, bad, problems);
  if (write) want.write = write;
  return { want, problems };
}

/**
 * write=N (temperature=T, top-k=K, write-seed=S): what a causal model writes after the sentence.
 * @param {URLSearchParams} params
 * @param {(name: string, expected: string) => void} bad
 * @param {string[]} problems
 * @returns {import('../sources/source.js').WriteState | null}
 */
export function readWrite(params, bad, problems) {
  const sampling = ['temperature', 'top-k', 'write-seed'].filter((name) => params.has(name));
  if (!params.has('write')) {
    for (const name of sampling) problems.push(`${name}= is read only with write=`);
    return null;
  }
  const steps = integer(params.get('write') ?? '', 1, 4096);
  if (steps === null) { bad('write', 'a number of tokens from 1 to 4096'); return null; }
  /** @type {import('../sources/source.js').WriteState} */
  const write = { steps };
  if (params.has('temperature')) {
    const text = params.get('temperature') ?? '';
    const t = /^\d{1,3}(\.\d{1,6})?$/.test(text) ? Number(text) : NaN;
    if (t > 0 && t <= 100) write.temperature = t;
    else bad('temperature', 'a temperature above 0, at most 100');
  }
  if (params.has('top-k')) {
    const k = integer(params.get('top-k') ?? '', 1, 2 ** 31);
    if (k === null) bad('top-k', 'a whole number from 1');
    else write.topK = k;
  }
  if (params.has('write-seed')) {
    const s = integer(params.get('write-seed') ?? '', 0, 2 ** 32 - 1);
    if (s === null) bad('write-seed', 'a whole number from 0 to 4294967295');
    else write.seed = s;
  }
  return write;
}

/**
 * The controller's problems with a link, in the link's words.
 * @param {import('./controller.js').Problem[]} problems
 * @param {URLSearchParams} params
 * @param {Explorer} explorer
 * @returns {string[]}
 */
export function linkProblems(problems, params, explorer) {
  const H = explorer.numHeads;
  return problems.map((p) => {
    switch (p.field) {
      case 'head': return `head=${quoted(params.get('head'))} is not a head from 1 to ${H}; showing the default`;
      case 'pair': return `compare=${quoted(params.get('compare'))} is not two heads from 1 to ${H}, e.g. compare=1,2; showing the default`;
      case 'layer': return `layer=${quoted(params.get('layer'))} is not ${p.expected}; showing the default`;
      case 'view': return `view=${quoted(params.get('view'))} is not ${p.expected}; showing the default`;
      case 'sentence': return `the sentence could not be shown: ${p.message}`;
      case 'source': return `the ${p.value} heads could not be loaded: ${p.message}`;
      case 'write': return `write=${quoted(params.get('write'))}: ${p.message ?? `not ${p.expected}`}`;
      default: return p.message ?? `${p.field} is not ${p.expected}`;
    }
  });
}

/**
 * Show what a query names; resolves to the messages for what could not be used.
 * @param {Explorer} explorer
 * @param {string | URLSearchParams} search
 */
export async function followLink(explorer, search) {
  const params = new URLSearchParams(search);
  const { want, problems } = readLink(params);
  const later = await explorer.setState(want);
  return [...problems, ...linkProblems(later, params, explorer)];
}

/** What is shown, as a query (defaults left out). @param {Explorer} explorer */
export function linkOf(explorer) {
  const params = new URLSearchParams();
  const { spec, source, sentence } = explorer;
  if (!source || !sentence) return params;
  const repo = hubRepoOf(spec);
  if (repo) {
    params.set('model', repo);
    const { endpoint, tokenizeTimeLimit } = /** @type {{ endpoint?: string, tokenizeTimeLimit?: number }} */ (spec);
    if (endpoint) params.set('endpoint', endpoint);
    if (tokenizeTimeLimit !== undefined) params.set('tokenize-time-limit', String(tokenizeTimeLimit));
  } else if (source.id !== 'designed') {
    params.set('source', source.id);
  }
  if (spec?.id === 'random') params.set('seed', String(spec.seed));
  if (source.numLayers > 1) params.set('layer', String(source.layer));
  if (sentence.example !== 0) params.set('sentence', sentence.text);
  if (explorer.selectedHead !== 0) params.set('head', String(explorer.selectedHead + 1));
  if (explorer.pair.a !== 0 || explorer.pair.b !== 1) params.set('compare', `${explorer.pair.a + 1},${explorer.pair.b + 1}`);
  if (explorer.view) params.set('view', explorer.view);
  const write = /** @type {import('../sources/source.js').WriteState | undefined} */ (sentence.write);
  if (write) {
    params.set('write', String(write.steps));
    if (write.temperature !== undefined) params.set('temperature', String(write.temperature));
    if (write.topK !== undefined) params.set('top-k', String(write.topK));
    if (write.seed !== undefined) params.set('write-seed', String(write.seed));
  }
  return params;
}
