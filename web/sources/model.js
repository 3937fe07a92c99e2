// The heads of a model the user brings: a GPT-2- or BERT-family checkpoint in Hugging Face layout
// (config.json, model.safetensors, tokenizer.json; a nanoGPT checkpoint through
// scripts/export/export_nanogpt.py), opened by web/lib/models.js and run end to end by the core.
// A sentence is run once, keeping the full maps of the layer in view and every layer's max-pooled
// (a text may be as long as the model's context, up to 1,024 tokens), and again on a change of
// layer; the next-token panel and head importance come from its LM head; head names only from
// the one rule of web/roles/, measured on demand on the model's own tokens. How its pieces read (their text, which make a word) is the
// tokenizer's own (web/lib/tokenizer.js, through the model's read()).
import { loadModel, loadWorkerModel, repeatedTokens, detectHeadsAsync } from '../lib/models.js';
import { topTokens } from '../lib/top-tokens.js';
import { isNode } from '../lib/wasm-module.js';
import { EXAMPLES } from './examples.js';
import { analyseHeads, tokenDifferences, tooManyTokens } from './source.js';
import { describeByStatistics } from './describe.js';
import { checkedWrite } from './write-state.js';
import { fetchData, pretrainedRoles } from '../roles/measure.js';
import { evidenceText } from '../roles/table.js';
import { labelName } from '../roles/vocabulary.js';

/** A model on this thread or in a Web Worker: every call is awaited. @typedef {import('../lib/models.js').Model | import('../lib/models.js').WorkerModel} Model */
/** A run that may keep one layer's weights only. @typedef {import('../lib/models.js').ModelRunResult<import('../lib/models.js').ModelTensor | null>} ModelRunResult */
/** @typedef {import('./source.js').HeadRoles} HeadRoles */
/**
 * A model opened from files and named; `stamp` tells two opens of one name apart; `files`: the
 * names of the files it was read from, and whether they were a folder (picked or dropped).
 * @typedef {{ name: string, stamp: string, model: Model, files?: string[], folder?: boolean }} OpenedModel
 */
/**
 * A text as the model reads it: its tokens (each with its id and word) and the model's run.
 * @typedef {import('./source.js').Sentence<import('./source.js').Token & { piece: string, id: number, word: number }> & { ids: number[], run: ModelRunResult }} ModelSentence
 */

/** The page shows at most this many tokens (the model's own context may be shorter). */
export const MODEL_MAX_TOKENS = 1024;

/**
 * The view of every layer draws each map from the core's max-pool to at most this many cells a
 * side (its cells are at most 96 CSS px); only the layer in view keeps its full maps, (H, T, T),
 * which a layer change asks the core for again: GPT-2 small's 12 layers at 1,024 tokens would
 * hold 604 MB of maps, one layer 50 MB.
 */
export const POOLED_SIZE = 128;

/**
 * Open a model where the page stays responsive: in a Web Worker where there are workers (the
 * weights are read and every run made there), else on this thread (Node.js, or inWorker false:
 * an element with worker="never").
 * @param {import('../lib/models.js').ModelFiles} files
 * @param {import('../lib/models.js').LoadWorkerModelOptions} [options]  (tokenizeTimeLimit and its setting: in a worker)
 * @param {boolean} [inWorker]
 * @returns {Promise<Model>}
 */
export function openModel(files, options, inWorker = true) {
  return inWorker && typeof Worker === 'function' && !isNode() ? loadWorkerModel(files, options) : loadModel(files, options);
}

export class ModelSource {
  /**
   * @param {{ opened?: OpenedModel, url?: string, endpoint?: string, tokenizeTimeLimit?: number, limitSetting?: string | null, onProgress?: (p: { loaded: number, total: number, file: string, plan?: import('../lib/models.js').HubPlan }) => void, inWorker?: boolean }} o
   *   opened: a model the page opened (the source does not own it); url: a folder to fetch, or
   *   hf:owner/name on the Hub (owned); endpoint: the Hub's address (a mirror);
   *   tokenizeTimeLimit: how long its tokenizer may take on one text, in ms (in a worker; the
   *   library's 5000 unless set), and limitSetting: what a time-out names as setting it;
   *   inWorker: open that folder in a Web Worker (false: on the page's thread)
   */
  constructor({ opened, url, endpoint, tokenizeTimeLimit, limitSetting = null, onProgress, inWorker = true }) {
    /** @type {'model'} */
    this.id = 'model';
    this.opened = opened ?? null;
    this.url = url ?? null;
    this.endpoint = endpoint ?? null;
    this.tokenizeTimeLimit = tokenizeTimeLimit;
    this.limitSetting = limitSetting;
    this.onProgress = onProgress;
    /** @type {Model | null} */
    this.model = opened ? opened.model : null;
    this.layer = 0;
    /** @type {import('./source.js').AnyMhaModule | null} */
    this.mha = null;
    /** What each piece of the vocabulary shows, by id (read once: predictions are drawn on every hover). @type {string[]} */
    this.vocabulary = [];
    /** What its heads do, once measureRoles has run. @type {HeadRoles | null} */
    this.roles = null;
    /** @type {'lesson'} the lesson's sentences: any text goes through the model's tokenizer */
    this.sentenceSet = 'lesson';
    this.runsInWorker = false;
    this.inWorker = inWorker;
    /** What opening a Hub repository fetches, once the Hub has said and the memory plan passed. @type {import('../lib/models.js').HubPlan | null} */
    this.plan = null;
  }

  /** Stops the download of a model this source fetches. */
  stop() {
    if (!this.model && this.url) this.#stopper.abort(new Error(`Stopped: ${this.name} was not opened (the files that had come whole are kept for next time).`));
  }

  #stopper = new AbortController();

  /** Whether the model it fetches is opened in a worker of its own; null for a model the page opened. */
  get ownWorker() {
    return this.opened ? null : this.inWorker;
  }

  get config() {
    if (!this.model) throw new Error('the model is not loaded');
    return this.model.config;
  }
  get name() {
    const label = this.opened ? this.opened.name : this.url?.startsWith('hf:') ? this.url.slice(3) : this.url ? decodeURIComponent(new URL(this.url).pathname.replace(/\/(config\.json)?$/, '').split('/').pop() || this.url) : 'model';
    return this.model ? `${this.config.name}-family model “${label}”` : `model “${label}”`;
  }
  get numLayers() { return this.model ? this.config.numLayers : 1; }
  get numHeads() { return this.model ? this.config.numHeads : 1; }
  /** Grouped-query attention: query head h reads key/value head h / (numHeads / numKvHeads). */
  get numKvHeads() { return this.model ? this.config.numKvHeads : 1; }
  /** A decoder: each row sees its own token and the ones before it (the config says). */
  get causal() { return this.model ? this.config.causal : false; }
  get maxTokens() { return this.model ? Math.min(MODEL_MAX_TOKENS, this.config.maxPositions) : MODEL_MAX_TOKENS; }
  get embedDim() { return this.model ? this.config.hidden : 0; }

  loadingNote() { return `Opening ${this.name}…`; }

  /** @param {import('./source.js').AnyMhaModule} mha  the main core, for the statistics */
  async load(mha) {
    this.mha = mha;
    if (!this.model) {
      if (!this.url) throw new Error('No model to show: open a model folder first.');
      const hub = this.url.startsWith('hf:');
      /** @param {{ file: string, loaded: number, total: number }} p */
      const onProgress = (p) => this.onProgress?.(this.plan ? { ...p, plan: this.plan } : p);
      this.model = await openModel(this.url, {
        onProgress, signal: this.#stopper.signal, tokenizeTimeLimit: this.tokenizeTimeLimit, tokenizeTimeLimitSetting: this.limitSetting,
        ...(hub ? { onPlan: (/** @type {import('../lib/models.js').HubPlan} */ plan) => { this.plan = plan; } } : {}),
        ...(this.endpoint ? { endpoint: this.endpoint } : {}),
      }, this.inWorker);
    }
    try {
      if (!this.model.tokenizer) {
        throw new Error(`${this.name} has no tokenizer.json: the page needs it to read text (save it beside config.json, e.g. with tokenizer.save_pretrained).`);
      }
      if (this.config.lmHead) this.vocabulary = (await this.model.read(Array.from({ length: this.config.vocabSize }, (_, i) => i))).texts;
    } catch (error) {
      this.dispose(); // a model fetched for this source goes with it (its worker too)
      throw error;
    }
  }

  get loaded() {
    const { model, mha } = this;
    if (!model || !mha) throw new Error('the model is not loaded');
    return { model, mha };
  }

  examples() { return EXAMPLES; }

  /**
   * The text as the model reads it, and what the model writes after it: `write` asked for
   * (web/sources/write-state.js checks it; null: nothing), or when it is left out, what was
   * written after the same text before (a layer shown, a head switched off keep it). What cannot
   * be written is said in the sentence's writeError, the text shown without it.
   * @param {string | number} input
   * @param {unknown} [write]
   * @returns {Promise<ModelSentence>}
   */
  async sentence(input, write) {
    const { text, example } = this.#textOf(input);
    const key = example >= 0 ? example : text;
    const wanted = write !== undefined ? write : this.#written?.key === key ? this.#written.write : null;
    this.#written = null;
    if (wanted === null) return this.#read(input);
    const checked = checkedWrite(wanted);
    if (!checked.write) return { ...await this.#read(input), writeError: `write: ${checked.error}` };
    /** @type {number[]} */
    let written;
    try {
      written = await this.#writeAfter(await this.loaded.model.encode(text), checked.write);
    } catch (error) {
      return { ...await this.#read(input), writeError: error instanceof Error ? error.message : String(error) };
    }
    this.#written = { key, write: checked.write };
    return this.#read(input, written, checked.write);
  }

  /** An example's index or a text: the text and its example's index (-1: typed). @param {string | number} input */
  #textOf(input) {
    const example = typeof input === 'number' ? input : EXAMPLES.findIndex((e) => e.text === input);
    const text = (typeof input === 'number' ? EXAMPLES[input].text : String(input)).trim();
    return { text, example };
  }

  /** What sentence() last wrote on, and after which text (an example's index or the text). @type {{ key: string | number, write: import('./source.js').WriteState } | null} */
  #written = null;

  /**
   * @param {string | number} input
   * @param {number[]} [written]  ids the model wrote after the text (write())
   * @param {import('./source.js').WriteState} [write]  how
   * @returns {Promise<ModelSentence>}
   */
  async #read(input, written = [], write = undefined) {
    const { model } = this.loaded;
    const { text, example } = this.#textOf(input);
    if (!text) throw new Error('Type a sentence first.');
    const ids = [...await model.encode(text), ...written];
    if (ids.length === written.length) throw new Error('The model\'s tokenizer found no tokens in that text.');
    if (ids.length > this.maxTokens) throw tooManyTokens(ids.length, this.maxTokens, 'tokens', 'the model\'s own tokenizer splits words into pieces');
    const { pieces, texts, words, special } = await model.read(ids);
    const tokens = pieces.map((piece, i) => {
      const shown = texts[i].trim() || (/^\s+$/.test(texts[i]) ? '␣' : piece);
      return {
        text: shown, tag: `#${ids[i]}`, word: words[i], piece, id: ids[i],
        details: [`piece ${JSON.stringify(piece)}`, `id ${ids[i]}`, special[i] ? 'a special token' : words[i] === words[i - 1] ? 'continues a word' : 'starts a word',
          ...(i >= ids.length - written.length ? ['written by the model'] : [])],
        ...(i >= ids.length - written.length ? { written: true } : {}),
      };
    });
    const run = await this.#run(ids);
    const tokenizer = /** @type {import('../lib/models.js').TokenizerInfo} */ (model.tokenizer);
    const mask = tokenizer.maskId === null ? -1 : ids.indexOf(tokenizer.maskId);
    return {
      text, example, tokens, ids, run, focus: mask >= 0 ? mask : Math.max(0, tokens.length - 1), written: written.length, ...(write ? { write } : {}),
      summary: `The model's own tokenizer (${tokenizer.name}, a vocabulary of ${this.config.vocabSize.toLocaleString('en')}) reads ${tokens.length} tokens; the pieces of one word are shown joined, with each token's id under it.`,
    };
  }

  /** @param {ModelSentence} sentence */
  sentenceNote(sentence) {
    return sentence.example >= 0 ? `Shows ${EXAMPLES[sentence.example].shows}.` : `Your sentence: ${sentence.tokens.length} tokens of the model's tokenizer.`;
  }

  textHelp() {
    return {
      help: `Your model: any text, read by its own tokenizer; up to ${this.maxTokens} tokens.${this.config.task === 'masked' ? ' Write [MASK] where the model should fill in a word.' : ''}`,
      placeholder: this.config.task === 'masked' ? 'e.g. The cat sat on the [MASK].' : 'e.g. The cat sat on the',
    };
  }

  /** A run that keeps every layer's maps pooled, and a long text's full maps of the layer in view only. @param {number[]} ids */
  #run(ids) {
    // a text up to POOLED_SIZE tokens keeps every layer's maps (the detectors' scores of the text in view read them)
    return this.loaded.model.run(ids, { headOutputs: true, weightsLayer: ids.length > POOLED_SIZE ? this.layer : 'all', pooledSize: POOLED_SIZE });
  }

  /**
   * The layer shown (its full maps: the sentence is run again when its run kept another layer's),
   * and every layer's maps pooled (the model view).
   * @param {ModelSentence} sentence
   */
  async compute(sentence) {
    if (!sentence.run.layers[this.layer].weights) sentence.run = await this.#run(sentence.ids);
    const shown = sentence.run.layers[this.layer];
    const weights = /** @type {import('../lib/index.js').Tensor} */ (shown.weights);
    return {
      weights, layers: sentence.run.layers.map((l) => l.pooled ?? /** @type {import('../lib/index.js').Tensor} */ (l.weights)),
      headOutputs: shown.headOutputs ?? null, concat: shown.concat ?? null, output: shown.attentionOutput ?? null,
      ...(await analyseHeads(this.loaded.mha, weights)),
    };
  }

  /** The layer's W_O (E, E) in nn.Linear's layout, read back from the core (GPT-2's c_proj transposed at load). */
  async outProjectionWeight() {
    let weight = this.#outProjections.get(this.layer);
    if (!weight) {
      weight = await this.loaded.model.attentionParameter(this.layer, 'out_proj.weight');
      this.#outProjections.set(this.layer, weight);
    }
    return weight;
  }

  /** @type {Map<number, import('../lib/index.js').Tensor>} layer -> its W_O */
  #outProjections = new Map();

  /**
   * With heads of the layer shown switched off: how far each token's final hidden state moves,
   * and the run (its predictions).
   * @param {ModelSentence} sentence
   * @param {number[]} heads
   */
  async ablation(sentence, heads) {
    const base = sentence.run.hidden;
    // the hidden states and logits only: a long text's maps of every layer would be 604 MB for GPT-2 small
    const run = heads.length ? await this.loaded.model.run(sentence.ids, { ablate: heads.map((h) => [this.layer, h]), weightsLayer: 'none' }) : sentence.run;
    const [T, E] = base.shape;
    return { rows: tokenDifferences(base.data, run.hidden.data, T, E), what: 'final hidden state', run };
  }

  /** Whether the model predicts tokens (GPT-2's next token, BERT's masked token). */
  get predicts() { return !!this.model && this.config.lmHead; }

  /**
   * The k most probable tokens at a position, as text: GPT-2's next token after it, BERT's
   * token in its place.
   * @param {Pick<ModelRunResult, 'logits'>} run
   * @param {number} position
   * @param {number} [k]
   * @returns {{ id: number, text: string, probability: number }[]}
   */
  predictions(run, position, k = 5) {
    return topTokens(run, k, position).map(([id, probability]) => ({ id, text: this.vocabulary[id] || `#${id}`, probability }));
  }

  /**
   * Each head's importance on the model's task over the sentence: the mean drop in log p(next
   * token) with it switched off, (layers, heads). Models that predict the next token only.
   * @param {ModelSentence} sentence
   */
  async headImportance(sentence) {
    if (this.config.task !== 'next-token') throw new Error(`Head importance is measured on the next token, which a ${this.config.name}-family model does not predict.`);
    if (sentence.ids.length < 2) throw new Error('Head importance needs at least two tokens (a token and the one after it).');
    return this.loaded.model.headImportance(sentence.ids);
  }

  /** Whether the model writes on: a causal model that predicts the next token. */
  get writes() { return !!this.model && this.config.causal && this.config.task === 'next-token'; }

  /**
   * The sentence with `steps` tokens the model writes after its text, each computed on the
   * key/value cache (Model.generate): the most probable, or drawn with a temperature and top-k
   * from a seed, so that the same settings write the same tokens. The longer text is then run
   * whole, so that every view shows it, the new tokens' rows among the others.
   * @param {ModelSentence} sentence  as sentence() gives it, nothing written
   * @param {import('./source.js').WriteState} write
   * @returns {Promise<ModelSentence>}
   */
  async write(sentence, write) {
    const written = await this.#writeAfter(sentence.ids, write);
    return this.#read(sentence.example >= 0 ? sentence.example : sentence.text, written, write);
  }

  /**
   * The ids the model writes after `prompt` (Model.generate, one cached step a token).
   * @param {number[]} prompt
   * @param {import('./source.js').WriteState} write
   */
  async #writeAfter(prompt, { steps, ...sampling }) {
    if (!this.writes) throw new Error(`The ${this.name} does not write on: that needs a causal model that predicts the next token.`);
    const total = prompt.length + steps;
    if (total > this.maxTokens) {
      throw new Error(`Writing ${steps} tokens after the text's ${prompt.length} makes ${total}; the explorer shows at most ${this.maxTokens}: write at most ${Math.max(0, this.maxTokens - prompt.length)}.`);
    }
    if (!prompt.length) throw new Error('The model\'s tokenizer found no tokens in that text.');
    return (await this.loaded.model.generate(steps, { prompt, ...sampling })).ids;
  }

  /** Whether the head detectors apply: a causal model that predicts the next token, with a tokenizer. */
  get detects() { return !!this.model && this.config.causal && this.config.task === 'next-token' && !!this.model.tokenizer; }

  /**
   * The token repeated random sequences begin with: the special token the tokenizer puts before
   * a text (Llama's <s>), else the vocabulary's one special token (GPT-2's <|endoftext|>, its
   * bos_token_id and eos_token_id), else a special token spelled as a beginning of text.
   * @param {boolean[]} special  by id
   * @param {string[]} names  by id
   */
  async #bos(special, names) {
    const first = (await this.loaded.model.encode('a'))[0];
    if (first !== undefined && special[first]) return first;
    const specials = special.flatMap((s, id) => (s ? [id] : []));
    if (specials.length === 1) return specials[0];
    const named = specials.find((id) => ['<|endoftext|>', '<s>', '<|begin_of_text|>'].includes(names[id]));
    if (named !== undefined) return named;
    throw new Error(`The detectors begin each sequence with the model's beginning-of-text token, and ${this.name}'s tokenizer names none of its ${specials.length} special tokens so (expected one special token, or <|endoftext|>, <s> or <|begin_of_text|>).`);
  }

  /**
   * Previous-token, duplicate-token and induction scores of every head (web/lib/detectors.js) on
   * repeated random tokens: BOS, r_1..r_N, r_1..r_N (N = 50, or less where the model's context is
   * shorter), `count` sequences drawn with `seed` from the ordinary vocabulary (not special, not
   * empty), and their shuffled controls; what `npm run heads` prints.
   * @param {{ seed?: number, count?: number, length?: number, onProgress?: (p: { done: number, total: number }) => void }} [options]
   * @returns {Promise<{ sequences: number[][], controls: number[][], heads: import('../lib/detectors.js').DetectedHead[], bos: number, length: number }>}
   */
  async detectHeads({ seed = 0, count = 10, length = 50, onProgress } = {}) {
    if (!this.detects) throw new Error(`The head detectors need a causal language model; ${this.name} is ${this.causal ? 'not one that predicts the next token' : 'a bidirectional encoder, whose heads also read later tokens'}.`);
    const { model } = this.loaded;
    const all = Array.from({ length: this.config.vocabSize }, (_, i) => i);
    const [{ special }, names] = await Promise.all([model.read(all), model.tokens(all)]);
    const bos = await this.#bos(special, names);
    const ordinary = all.filter((id) => !special[id] && !!names[id] && id !== bos);
    const N = Math.min(length, Math.floor((this.config.maxPositions - 2) / 2));
    if (N < 1) throw new Error(`The model reads ${this.config.maxPositions} positions; a repeated sequence needs at least 4.`);
    const { sequences, controls } = repeatedTokens({ ordinary, bos, length: N, count, seed });
    const heads = await detectHeadsAsync(async (ids) => (await model.run(ids)).layers.map((l) => l.weights), sequences, controls, { onProgress });
    return { sequences, controls, heads, bos, length: N };
  }

  /**
   * Name its heads by the one rule of web/roles/ on the hand-annotated sentences, read by the
   * model's own tokenizer (sentences whose tokens do not line up with the data's words are left
   * out); a causal model's by the rule's causal reading.
   * @param {import('./source.js').MeasureProgress} [onProgress]
   * @param {import('../roles/measure.js').DataReader} [read]  the annotated data's files (fetched from beside the page by default)
   */
  async measureRoles(onProgress, read = fetchData) {
    const { model } = this.loaded;
    const encoder = {
      encode: async (/** @type {string} */ text) => {
        const ids = await model.encode(text);
        // longer than the model's context: no pieces, so the sentence is left out (and counted)
        if (ids.length > this.maxTokens) return { pieces: [], words: [], layers: [] };
        const { words, marked } = await model.read(ids);
        return { pieces: marked, words, layers: (await model.run(ids)).layers };
      },
    };
    this.roles = await pretrainedRoles(encoder, read, { onProgress, causal: this.causal, source: 'model' });
    return this.roles;
  }

  /** Head h's entry in the roles table, once measured. @param {number} h */
  #entry(h) {
    return this.roles?.heads.find((e) => e.layer === this.layer && e.head === h) ?? null;
  }

  /** @param {number} h */
  title(h) {
    const e = this.#entry(h);
    return `Layer ${this.layer} head ${h + 1}${e ? ` – ${labelName(e.label)}` : ''}`;
  }
  /** @param {number} h */
  short(h) {
    const e = this.#entry(h);
    return e ? labelName(e.label) : `layer ${this.layer}`;
  }

  /** @param {number} h @param {import('../lib/index.js').HeadStatistics} s */
  describe(h, s) {
    const e = this.#entry(h);
    return {
      focus: `On this sentence, layer ${this.layer}'s head ${h + 1} focuses on ${describeByStatistics(s)}.`,
      typical: e && this.roles ? `${e.kind === 'role' || e.kind === 'relation' ? 'Named by' : 'Not named:'} ${evidenceText(e, this.roles.rule)}.`
        : 'Its job is not known: measure the heads on the annotated sentences, switch it off, or measure head importance to find out.',
      how: '',
    };
  }

  check() { return undefined; }

  /** Where its files came from: fetched from a URL, or read from files the user picked or dropped. */
  provenance() {
    const { plan } = this;
    if (plan) {
      const where = plan.endpoint === 'https://huggingface.co' ? 'the Hugging Face Hub' : plan.endpoint;
      return `Its files come from ${where} (${plan.repo} at commit ${plan.commit.slice(0, 7)}) and are kept in this browser, so it opens again offline`;
    }
    if (this.url) return `Its files were fetched from ${this.url}`;
    const o = this.opened;
    const list = o?.files?.length ? ` (${o.files.join(', ')})` : '';
    return `Its files were read in this page from the ${o?.folder ? `folder “${o.name}”` : 'files'} you opened${list}; nothing was uploaded`;
  }

  note() {
    const c = this.config;
    const what = this.causal ? 'a causal language model: each token attends to itself and the tokens before it' : 'a bidirectional encoder: each token attends to every token';
    return `${this.name}: ${c.numLayers} layers of ${c.numHeads} heads, width ${c.hidden}, ${(c.parameters / 1e6).toFixed(c.parameters < 1e7 ? 2 : 1)}M parameters, ${what}. ${this.provenance()}. The core computes it end to end in this page. Layer ${this.layer} is shown.`;
  }

  woNote() {
    const { attentionOutputName, conv1d, preNorm } = this.config;
    const name = attentionOutputName.includes('{l}.') ? attentionOutputName.split('{l}.').pop() : attentionOutputName;
    return `This W_O is layer ${this.layer}'s ${name}${conv1d ? ' (stored transposed, as a Conv1D layer stores it)' : ''}: it mixes all ${this.numHeads} heads ${preNorm ? 'into every number the block adds to its residual stream' : 'before the residual add and the LayerNorm'}.`;
  }

  dispose() {
    // a model fetched for this source is its own; one the page opened stays with the page
    if (!this.opened && this.model) this.model.dispose();
    this.model = null;
  }
}

/**
 * Open a model from the files of a folder (picked or dropped) and name it by the folder.
 * @param {Iterable<File> | Map<string, any> | Record<string, any>} files
 * @param {string} [name]
 * @param {boolean} [inWorker]  in a Web Worker (false: on the page's thread)
 * @param {{ tokenizeTimeLimit?: number, limitSetting?: string | null }} [limit]  how long its
 *   tokenizer may take on one text, in ms, and what a time-out names as setting it
 * @returns {Promise<OpenedModel>}
 */
export async function openModelFiles(files, name, inWorker = true, { tokenizeTimeLimit, limitSetting = null } = {}) {
  const list = files instanceof Map || !(Symbol.iterator in Object(files)) ? null : [.../** @type {Iterable<File>} */ (files)];
  const folder = list?.map((f) => /** @type {{ webkitRelativePath?: string }} */ (f).webkitRelativePath?.split('/')[0]).find(Boolean);
  const model = await openModel(list ?? files, { tokenizeTimeLimit, tokenizeTimeLimitSetting: limitSetting }, inWorker);
  const names = list ? list.map((f) => f.name) : files instanceof Map ? [...files.keys()] : Object.keys(files);
  return {
    name: name ?? folder ?? model.config.architecture, stamp: `${Date.now()}:${Math.random().toString(36).slice(2, 8)}`, model,
    // the files the model is read from, of those given (a folder may hold others)
    files: names.filter((n) => /^(config|tokenizer|tokenizer_config)\.json$|\.safetensors$/.test(n)).sort(), folder: !!(name ?? folder),
  };
}
