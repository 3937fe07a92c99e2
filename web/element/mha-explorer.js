// <mha-explorer>: the head-comparison explorer as one custom element. One script tag, no build:
//
//   <script type="module" src="…/web/element/mha-explorer.js"></script>
//   <mha-explorer sentence="The cat sat on the mat because it was tired." view="grid"></mha-explorer>
//
// Attributes (all optional; see README "The <mha-explorer> element"):
//   sentence       the text (the example sentences are pre-tagged; other text loads the tagger)
//   heads          designed | random | random:SEED | URL of a state_dict (.safetensors or .json)
//   d-model        model width (random heads; designed heads are 64 wide)        default 64
//   num-heads      number of heads (random heads; a file's own config wins)       default 8
//   selected-head  1-based head shown in the single and compare views             default 1
//   compare-head   1-based second head of the compare view                        default next
//   view           single | grid | compare                                        default single
//   theme          light | dark | auto                                             default auto
//   height         CSS height (a number means px); content scrolls inside          default: content
//   worker         auto | always | never: compute in a Web Worker (auto: large inputs)
// Events (bubbling, composed): head-selected { head, index, name }, computed { … }, error { message }.
//
// Every number shown comes from the WebAssembly core through the JS API (../lib/). Several
// elements on a page share the core but nothing else. No globals beyond the element's name.

import { loadMha, loadStateDictFile } from '../lib/index.js';
import { analyseTokens, tagText, MAX_TOKENS } from '../app/tokens.js';
import { embedTokens, D_MODEL } from '../app/embeddings.js';
import { designedStateDict, HEADS, NUM_HEADS } from '../app/designed-heads.js';
import { EXAMPLES } from '../app/examples.js';
import { TAGGED_EXAMPLES } from '../app/examples.tagged.js';
import { drawHeatmap, cellAt } from '../app/heatmap.js';
import { ELEMENT_CSS } from './styles.js';

const VIEWS = ['single', 'grid', 'compare'];
/** Multiply-adds of a forward pass above which `worker="auto"` computes in a worker. */
const WORKER_THRESHOLD = 2e7;
/** Work that has taken this long shows the progress indicator. */
const PROGRESS_DELAY_MS = 200;

// ---------------------------------------------------------------------------------------------
// Shared by every element on the page (module scope: no globals)

let sharedSheet = null;
function styleSheet() {
  if (!sharedSheet) {
    sharedSheet = new CSSStyleSheet();
    sharedSheet.replaceSync(ELEMENT_CSS);
  }
  return sharedSheet;
}

let taggerPromise = null;
/** compromise, loaded only when a sentence is not one of the pre-tagged examples. */
function loadTagger() {
  if (!taggerPromise) {
    taggerPromise = import('../vendor/compromise-three.mjs').then((m) => m.default).catch((error) => {
      taggerPromise = null;
      throw new Error(`the part-of-speech tagger (web/vendor/compromise-three.mjs) could not be loaded: ${error.message}`);
    });
  }
  return taggerPromise;
}

let workerPromise = null;
function sharedWorker() {
  if (!workerPromise) {
    workerPromise = import('../lib/worker.js').then((m) => m.createWorkerMha()).catch((error) => {
      workerPromise = null;
      throw error;
    });
  }
  return workerPromise;
}

const weightFiles = new Map(); // URL -> Promise<ArrayBuffer>
function fetchWeights(url) {
  if (!weightFiles.has(url)) {
    const promise = fetch(url).then(async (response) => {
      if (!response.ok) throw new Error(`could not load weights from ${url}: HTTP ${response.status} ${response.statusText}`);
      return response.arrayBuffer();
    });
    promise.catch(() => weightFiles.delete(url));
    weightFiles.set(url, promise);
  }
  return weightFiles.get(url);
}

/** Tokens of a sentence, analysed: pre-tagged examples need no tagger. */
async function tokensOf(text) {
  let raw = TAGGED_EXAMPLES[text];
  if (!raw) {
    const nlp = await loadTagger();
    raw = tagText(nlp, text);
  }
  if (raw.length === 0) throw new Error('the sentence has no tokens');
  if (raw.length > MAX_TOKENS) {
    throw new Error(`the sentence has ${raw.length} tokens; the explorer takes at most ${MAX_TOKENS}`);
  }
  return analyseTokens(raw);
}

/** A fixed (64 → width) projection of the lesson's token features, for models of another width. */
function projectFeatures(x, rows, width) {
  if (width === D_MODEL) return x;
  const out = new Float32Array(rows * width);
  let s = 12345;
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 8) / 0x1000000) * 2 - 1; // uniform in [-1, 1)
  };
  const scale = Math.sqrt(3 / D_MODEL); // unit variance per output for unit-variance inputs
  const projection = new Float32Array(D_MODEL * width);
  for (let k = 0; k < projection.length; k += 1) projection[k] = next() * scale;
  for (let i = 0; i < rows; i += 1) {
    for (let f = 0; f < D_MODEL; f += 1) {
      const v = x[i * D_MODEL + f];
      if (v === 0) continue;
      for (let j = 0; j < width; j += 1) out[i * width + j] += v * projection[f * width + j];
    }
  }
  return out;
}

function positiveIntegerAttribute(value, fallback) {
  if (value === null || value === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : NaN;
}

/** What the heads attribute asks for. */
function parseHeads(value) {
  const v = (value ?? 'designed').trim();
  if (v === '' || v === 'designed') return { kind: 'designed' };
  const random = /^random(?::(\d+))?$/.exec(v);
  if (random) return { kind: 'random', seed: random[1] === undefined ? 0 : Number(random[1]) };
  return { kind: 'url', url: new URL(v, document.baseURI).href };
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('aria-') || key.startsWith('data-') || key === 'role' || key === 'part') node.setAttribute(key, value);
    else node[key] = value;
  }
  node.append(...children);
  return node;
}

// ---------------------------------------------------------------------------------------------

export class MhaExplorerElement extends HTMLElement {
  static get observedAttributes() {
    return ['sentence', 'heads', 'd-model', 'num-heads', 'selected-head', 'compare-head', 'view', 'theme', 'height', 'worker'];
  }

  #root;
  #ui = {};
  #attention = null; // direct MultiHeadAttention, or one in the worker
  #attentionKey = '';
  #onWorker = false;
  #result = null; // { tokens, weights (H·L·L), H, L, stats, similarity, source, dModel }
  #status = 'loading';
  #generation = 0;
  #frame = 0;
  #resizeObserver = null;
  #darkQuery = null;
  #hoverCell = null;
  #layout = null;
  #connected = false;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.adoptedStyleSheets = [styleSheet()];
    this.#build();
  }

  // -- attributes as properties ----------------------------------------------------------------

  get sentence() { return this.getAttribute('sentence') ?? EXAMPLES[0].text; }
  set sentence(v) { this.setAttribute('sentence', v); }
  get heads() { return this.getAttribute('heads') ?? 'designed'; }
  set heads(v) { this.setAttribute('heads', v); }
  get view() {
    const v = this.getAttribute('view');
    return VIEWS.includes(v) ? v : 'single';
  }
  set view(v) { this.setAttribute('view', v); }
  /** 1-based. */
  get selectedHead() { return this.#clampHead(positiveIntegerAttribute(this.getAttribute('selected-head'), 1)); }
  set selectedHead(v) { this.setAttribute('selected-head', String(v)); }
  get compareHead() {
    const H = this.#result ? this.#result.H : NUM_HEADS;
    const fallback = (this.selectedHead % H) + 1;
    return this.#clampHead(positiveIntegerAttribute(this.getAttribute('compare-head'), fallback));
  }
  set compareHead(v) { this.setAttribute('compare-head', String(v)); }
  get theme() { return this.getAttribute('theme') ?? 'auto'; }
  set theme(v) { this.setAttribute('theme', v); }
  /** 'loading' | 'computing' | 'ready' | 'error' */
  get status() { return this.#status; }
  /** The last result: tokens, per-head weights (H, L, L) and statistics; null before the first. */
  get result() {
    if (!this.#result) return null;
    const r = this.#result;
    return {
      tokens: r.tokens.map((t) => t.text),
      numHeads: r.H,
      dModel: r.dModel,
      source: r.source,
      weights: { data: r.weights.slice(), shape: [r.H, r.L, r.L] },
      statistics: r.stats.map((s) => ({ ...s })),
      worker: r.worker,
      ms: r.ms,
    };
  }

  #clampHead(h) {
    const H = this.#result ? this.#result.H : NUM_HEADS;
    return Number.isInteger(h) ? Math.min(Math.max(h, 1), H) : 1;
  }

  // -- lifecycle -------------------------------------------------------------------------------

  connectedCallback() {
    this.#connected = true;
    this.#applyTheme();
    this.#applyHeight();
    this.#resizeObserver = new ResizeObserver(() => this.#scheduleRender());
    this.#resizeObserver.observe(this);
    this.#recompute();
  }

  disconnectedCallback() {
    this.#connected = false;
    this.#resizeObserver?.disconnect();
    this.#darkQuery?.removeEventListener('change', this.#onSchemeChange);
    this.#generation += 1;
    this.#releaseAttention();
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (!this.#connected || oldValue === newValue) return;
    if (name === 'theme') this.#applyTheme();
    else if (name === 'height') this.#applyHeight();
    else if (name === 'view' || name === 'selected-head' || name === 'compare-head') this.#scheduleRender();
    else this.#recompute();
  }

  // -- theme and size --------------------------------------------------------------------------

  #onSchemeChange = () => this.#applyTheme();

  #applyTheme() {
    const theme = this.theme;
    if (theme === 'auto' && !this.#darkQuery) {
      this.#darkQuery = matchMedia('(prefers-color-scheme: dark)');
      this.#darkQuery.addEventListener('change', this.#onSchemeChange);
    }
    const dark = theme === 'dark' || (theme === 'auto' && this.#darkQuery.matches);
    this.classList.toggle('dark', dark);
    this.#scheduleRender();
  }

  #applyHeight() {
    const h = this.getAttribute('height');
    // CSSOM, not a style attribute in markup: allowed under a strict style-src
    this.style.height = h === null || h === '' ? '' : /^\d+(\.\d+)?$/.test(h) ? `${h}px` : h;
  }

  #themeColors() {
    const css = getComputedStyle(this);
    const v = (name) => css.getPropertyValue(name).trim();
    return { text: v('--mha-text'), grid: v('--mha-grid'), highlight: v('--mha-highlight'), font: v('--mha-font') || 'system-ui, sans-serif' };
  }

  // -- the shadow DOM --------------------------------------------------------------------------

  #build() {
    const ui = this.#ui;
    ui.input = el('input', { type: 'text', maxLength: 600, 'aria-label': 'Sentence', placeholder: 'Type a sentence' });
    ui.form = el('form', { class: 'sentence-form', part: 'sentence-form' }, ui.input, el('button', { type: 'submit', text: 'Analyse' }));
    ui.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = ui.input.value.trim();
      if (text) this.sentence = text;
    });
    ui.views = el('div', { class: 'views', role: 'group', 'aria-label': 'View' },
      ...VIEWS.map((v) => {
        const b = el('button', { type: 'button', text: v[0].toUpperCase() + v.slice(1), 'data-view': v, 'aria-pressed': 'false' });
        b.addEventListener('click', () => { this.view = v; });
        return b;
      }));
    ui.tabs = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Heads' });
    ui.tabs.addEventListener('keydown', (event) => this.#onTabKeydown(event));
    ui.content = el('div', { class: 'content' });
    ui.progressText = el('span', { text: 'Computing…' });
    ui.progress = el('div', { class: 'progress', role: 'progressbar', 'aria-label': 'Computing', hidden: true },
      el('div', { class: 'bar' }), ui.progressText);
    ui.body = el('div', { class: 'body', part: 'body' }, ui.content, ui.progress);
    ui.status = el('p', { class: 'status', role: 'status', 'aria-live': 'polite', text: 'Loading the WebAssembly attention core…' });
    ui.frame = el('div', { class: 'frame', part: 'frame' },
      el('div', { class: 'toolbar' }, ui.form, ui.views), ui.tabs, ui.body, ui.status);
    this.#root.append(ui.frame);
  }

  // -- computing -------------------------------------------------------------------------------

  #setStatus(status, message, isError = false) {
    this.#status = status;
    this.setAttribute('aria-busy', String(status === 'loading' || status === 'computing'));
    this.#ui.status.textContent = message;
    this.#ui.status.classList.toggle('error', isError);
  }

  #releaseAttention() {
    const attention = this.#attention;
    this.#attention = null;
    this.#attentionKey = '';
    if (attention) Promise.resolve(attention.dispose()).catch(() => {});
  }

  /** Wrap slow work in the progress indicator: it shows only after 200 ms. */
  async #withProgress(label, work) {
    const started = performance.now();
    const { progress, progressText } = this.#ui;
    const timer = setInterval(() => {
      const ms = performance.now() - started;
      if (ms < PROGRESS_DELAY_MS) return;
      progress.hidden = false;
      progressText.textContent = `${label}… ${(ms / 1000).toFixed(1)} s`;
    }, 100);
    try {
      return await work();
    } finally {
      clearInterval(timer);
      progress.hidden = true;
    }
  }

  async #recompute() {
    const generation = ++this.#generation;
    const stale = () => generation !== this.#generation;
    this.#ui.input.value = this.sentence;
    try {
      this.#setStatus(this.#result ? 'computing' : 'loading', this.#result ? 'Computing…' : 'Loading the WebAssembly attention core…');
      const result = await this.#withProgress('Computing', () => this.#compute(stale));
      if (!result) return; // superseded by a newer change
      this.#result = result;
      this.#setStatus('ready', `${result.H} heads × ${result.L} tokens, d_model ${result.dModel}, ${result.sourceText}: ${result.ms.toFixed(1)} ms in the WebAssembly core${result.worker ? ' (in a Web Worker)' : ''}.`);
      this.#renderNow();
      this.dispatchEvent(new CustomEvent('computed', { bubbles: true, composed: true, detail: this.result }));
    } catch (error) {
      if (stale()) return;
      const message = error && error.message ? error.message : String(error);
      this.#setStatus('error', `Cannot show this: ${message}`, true);
      this.#ui.content.replaceChildren();
      this.#ui.tabs.replaceChildren();
      this.#result = null;
      this.dispatchEvent(new CustomEvent('error', { bubbles: true, composed: true, detail: { message } }));
    }
  }

  async #compute(stale) {
    const heads = parseHeads(this.getAttribute('heads'));
    const tokensPromise = tokensOf(this.sentence);
    let config;
    let stateDict = null;
    let sourceText;
    if (heads.kind === 'url') {
      const bytes = await fetchWeights(heads.url);
      const numHeads = this.hasAttribute('num-heads') ? positiveIntegerAttribute(this.getAttribute('num-heads'), NUM_HEADS) : undefined;
      const file = loadStateDictFile(bytes, { fileName: heads.url, numHeads });
      ({ config, stateDict } = file);
      config = { ...config, batchFirst: true, kdim: undefined, vdim: undefined };
      if (file.config.kdim !== file.config.embedDim || file.config.vdim !== file.config.embedDim) {
        throw new Error(`the weights in ${heads.url} have kdim ${file.config.kdim} / vdim ${file.config.vdim}; the explorer runs self-attention, so they must equal embed_dim ${file.config.embedDim}`);
      }
      sourceText = `weights from ${heads.url.split('/').pop()}`;
    } else {
      const dModel = positiveIntegerAttribute(this.getAttribute('d-model'), D_MODEL);
      const numHeads = positiveIntegerAttribute(this.getAttribute('num-heads'), NUM_HEADS);
      if (!(dModel > 0) || !(numHeads > 0)) {
        throw new Error(`d-model and num-heads must be positive integers, got "${this.getAttribute('d-model')}" and "${this.getAttribute('num-heads')}"`);
      }
      if (dModel % numHeads !== 0) throw new Error(`num-heads ${numHeads} must divide d-model ${dModel}`);
      if (heads.kind === 'designed' && (dModel !== D_MODEL || numHeads !== NUM_HEADS)) {
        throw new Error(`the designed heads are ${NUM_HEADS} heads of a ${D_MODEL}-wide model (got d-model ${dModel}, num-heads ${numHeads}); use heads="random:SEED" for other sizes`);
      }
      config = { embedDim: dModel, numHeads, batchFirst: true, seed: heads.seed ?? 0 };
      sourceText = heads.kind === 'designed' ? 'designed heads' : `random heads (seed ${heads.seed})`;
    }
    const tokens = await tokensPromise;
    if (stale()) return null;
    const L = tokens.length;
    const E = config.embedDim;
    const H = config.numHeads;
    const x = projectFeatures(embedTokens(tokens), L, E);

    const mode = this.getAttribute('worker') ?? 'auto';
    const work = L * E * E * 4 + 2 * L * L * E; // multiply-adds: projections and the two attention products
    const onWorker = mode === 'always' || (mode !== 'never' && work > WORKER_THRESHOLD);
    const key = JSON.stringify([heads, config, onWorker]);
    const mha = onWorker ? await sharedWorker() : await loadMha();
    if (stale()) return null;
    if (key !== this.#attentionKey) {
      this.#releaseAttention();
      const attention = new mha.MultiHeadAttention(config);
      this.#attention = attention;
      this.#attentionKey = key;
      this.#onWorker = onWorker;
      try {
        if (heads.kind === 'designed') await attention.loadStateDict(designedStateDict());
        else if (heads.kind === 'url') await attention.loadStateDict(stateDict);
        // random: the constructor already initialised from the seed, as PyTorch does
      } catch (error) {
        this.#releaseAttention();
        throw error;
      }
    }
    const attention = this.#attention;
    const started = performance.now(); // the forward pass and the statistics
    const forward = await attention.forward({ query: { data: x, shape: [1, L, E] }, needWeights: true, averageAttnWeights: false });
    const weights = { data: forward.weights.data, shape: [H, L, L] };
    const [stats, similarity] = await Promise.all([mha.headStatistics(weights), mha.headSimilarity(weights)]);
    const ms = performance.now() - started;
    if (stale()) return null;
    return {
      tokens, L, H, dModel: E, weights: forward.weights.data, stats: stats.heads, similarity: similarity.jsd,
      source: heads.kind, sourceText, worker: onWorker, ms, mha, divergence: null,
    };
  }

  // -- rendering -------------------------------------------------------------------------------

  #scheduleRender() {
    if (!this.#result) return;
    cancelAnimationFrame(this.#frame);
    this.#frame = requestAnimationFrame(() => this.#renderNow());
  }

  #headName(h) {
    const r = this.#result;
    if (r.source === 'designed') return `Head ${h + 1} – ${HEADS[h].name}`;
    return `Head ${h + 1}`;
  }

  #headShort(h) {
    const r = this.#result;
    return r.source === 'designed' ? HEADS[h].short : r.source === 'random' ? 'random' : 'loaded';
  }

  #headMap(h) {
    const { L, weights } = this.#result;
    return weights.subarray(h * L * L, (h + 1) * L * L);
  }

  #renderNow() {
    cancelAnimationFrame(this.#frame);
    const r = this.#result;
    if (!r) return;
    const view = this.view;
    for (const b of this.#ui.views.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.view === view));
    this.#renderTabs(view);
    const theme = this.#themeColors();
    const width = Math.max(160, this.#ui.body.clientWidth || this.clientWidth - 24 || 600);
    if (view === 'grid') this.#renderGrid(theme, width);
    else if (view === 'compare') this.#renderCompare(theme, width);
    else this.#renderSingle(theme, width);
  }

  #renderTabs(view) {
    const { H } = this.#result;
    const tabs = this.#ui.tabs;
    tabs.hidden = view === 'grid';
    if (tabs.childElementCount !== H || tabs.dataset.source !== this.#result.source) {
      tabs.dataset.source = this.#result.source;
      tabs.replaceChildren(...Array.from({ length: H }, (_, h) => {
        const tab = el('button', { type: 'button', role: 'tab', class: 'tab', text: `H${h + 1} · ${this.#headShort(h)}`, 'data-head': String(h + 1) });
        tab.addEventListener('click', () => this.#selectHead(h + 1));
        return tab;
      }));
    }
    const selected = this.selectedHead;
    tabs.querySelectorAll('[role="tab"]').forEach((tab, h) => {
      tab.setAttribute('aria-selected', String(h + 1 === selected));
      tab.tabIndex = h + 1 === selected ? 0 : -1;
    });
  }

  #selectHead(head, focus = false) {
    if (head !== this.selectedHead) {
      this.selectedHead = head;
      this.#renderNow();
    }
    if (focus) this.#ui.tabs.querySelector(`[data-head="${head}"]`)?.focus();
    this.dispatchEvent(new CustomEvent('head-selected', {
      bubbles: true, composed: true, detail: { head, index: head - 1, name: this.#headName(head - 1) },
    }));
  }

  #onTabKeydown(event) {
    const H = this.#result ? this.#result.H : 0;
    if (!H) return;
    const current = this.selectedHead;
    let next = 0;
    if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (current % H) + 1;
    if (event.key === 'ArrowLeft' || event.key === 'ArrowUp') next = ((current - 2 + H) % H) + 1;
    if (event.key === 'Home') next = 1;
    if (event.key === 'End') next = H;
    if (next) {
      event.preventDefault();
      this.#selectHead(next, true);
    }
  }

  #content(className, key) {
    // Rebuild a view's DOM only when the view or its shape changes; redraw canvases in place.
    const content = this.#ui.content;
    const fullKey = `${className}:${key}`;
    if (content.dataset.key !== fullKey) {
      content.dataset.key = fullKey;
      content.replaceChildren(el('div', { class: className }));
    }
    return content.firstElementChild;
  }

  #renderSingle(theme, width) {
    const r = this.#result;
    const h = this.selectedHead - 1;
    const box = this.#content('single', `${r.H}`);
    if (!box.firstChild) {
      const canvas = el('canvas', { role: 'img', class: 'heatmap', part: 'heatmap' });
      canvas.addEventListener('pointermove', (event) => this.#onPointer(event, canvas));
      canvas.addEventListener('pointerleave', () => { this.#hoverCell = null; this.#scheduleRender(); });
      box.append(canvas, el('div', { class: 'info' }, el('h3'), el('p', { class: 'focus' }), el('dl', { class: 'stats' }),
        el('p', { class: 'note', text: 'Rows: queries (the word looking). Columns: keys (the words looked at). Each row sums to 1.' })));
    }
    const [canvas, info] = box.children;
    const wide = width >= 620;
    const mapWidth = wide ? Math.min(width - 250, 640) : width;
    const labels = r.tokens.map((t) => t.text);
    this.#layout = drawHeatmap(canvas, {
      values: this.#headMap(h), rows: r.L, cols: r.L, rowLabels: labels, colLabels: labels, width: mapWidth, maxCell: 44,
      hoverCell: this.#hoverCell, highlightRow: this.#hoverCell ? this.#hoverCell.row : -1, showValues: true, theme,
    });
    canvas.setAttribute('aria-label', `${this.#headName(h)}: ${r.L} by ${r.L} attention weights`);
    const s = r.stats[h];
    info.querySelector('h3').textContent = this.#headName(h);
    info.querySelector('.focus').textContent = r.source === 'designed' ? `Looks at ${HEADS[h].focus}` : describeByStatistics(s);
    const hover = this.#hoverCell;
    const rows = [
      ['Entropy', `${s.entropy.toFixed(2)} nats (normalised ${s.normalizedEntropy.toFixed(2)})`],
      ['Max attention', s.maxAttention.toFixed(2)],
      ['Sparsity', `${Math.round(s.sparsity * 100)}%`],
      ['Mean distance', `${s.meanDistance.toFixed(1)} tokens`],
    ];
    if (hover) rows.push([`“${labels[hover.row]}” → “${labels[hover.col]}”`, this.#headMap(h)[hover.row * r.L + hover.col].toFixed(3)]);
    info.querySelector('.stats').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
  }

  #onPointer(event, canvas) {
    if (!this.#layout) return;
    const cell = cellAt(this.#layout, event, canvas);
    const same = cell && this.#hoverCell && cell.row === this.#hoverCell.row && cell.col === this.#hoverCell.col;
    if (same || (!cell && !this.#hoverCell)) return;
    this.#hoverCell = cell;
    this.#scheduleRender();
  }

  #renderGrid(theme, width) {
    const r = this.#result;
    // As many columns as fit at 150 px, then balanced (8 heads in 4 + 4 rather than 7 + 1)
    let columns = Math.max(1, Math.min(r.H, Math.floor(width / 150)));
    columns = Math.ceil(r.H / Math.ceil(r.H / columns));
    const cellWidth = Math.floor((width - (columns - 1) * 8) / columns) - 14;
    const grid = this.#content('grid', `${r.H}:${r.source}`);
    grid.style.setProperty('--mha-columns', String(columns));
    if (grid.childElementCount !== r.H) {
      grid.replaceChildren(...Array.from({ length: r.H }, (_, h) => {
        const button = el('button', { type: 'button', class: 'multiple', 'aria-pressed': 'false', 'data-head': String(h + 1) },
          el('span', { class: 'title' }), el('canvas', { 'aria-hidden': 'true' }));
        button.addEventListener('click', () => this.#selectHead(h + 1));
        return button;
      }));
    }
    const selected = this.selectedHead;
    [...grid.children].forEach((button, h) => {
      button.setAttribute('aria-pressed', String(h + 1 === selected));
      button.querySelector('.title').textContent = `H${h + 1} · ${this.#headShort(h)}`;
      button.setAttribute('aria-label', `${this.#headName(h)}: entropy ${r.stats[h].entropy.toFixed(2)} nats. Select this head.`);
      drawHeatmap(button.querySelector('canvas'), {
        values: this.#headMap(h), rows: r.L, cols: r.L, width: Math.max(60, cellWidth), maxCell: 24, showValues: false, theme, stableSize: false,
      });
    });
  }

  #renderCompare(theme, width) {
    const r = this.#result;
    const a = this.selectedHead - 1;
    const b = this.compareHead - 1;
    const box = this.#content('compare', `${r.H}:${r.source}`);
    if (!box.firstChild) {
      const figure = (caption) => el('figure', {}, el('canvas', { role: 'img' }), el('figcaption', { text: caption }));
      const select = el('select', { 'aria-label': 'Compare with head' });
      select.addEventListener('change', () => { this.compareHead = Number(select.value); });
      box.append(figure(''), figure(''), figure('A − B (purple: B larger, orange: A larger)'),
        el('p', { class: 'jsd note' }), el('label', { text: 'Compare with ' }, select));
    }
    const [figA, figB, figDiff, jsdNote, label] = box.children;
    const select = label.querySelector('select');
    if (select.options.length !== r.H) {
      select.replaceChildren(...Array.from({ length: r.H }, (_, h) => el('option', { value: String(h + 1), text: `H${h + 1} · ${this.#headShort(h)}` })));
    }
    select.value = String(b + 1);
    const columns = width >= 700 ? 3 : width >= 460 ? 2 : 1;
    box.style.setProperty('--mha-columns', String(columns));
    const each = Math.floor((width - (columns - 1) * 12) / columns) - 4;
    const labels = r.tokens.map((t) => t.text);
    const mapA = this.#headMap(a);
    const mapB = this.#headMap(b);
    const diff = new Float32Array(mapA.length);
    for (let k = 0; k < diff.length; k += 1) diff[k] = mapA[k] - mapB[k];
    const common = { rows: r.L, cols: r.L, rowLabels: labels, colLabels: labels, width: each, maxCell: 28, showValues: false, theme };
    drawHeatmap(figA.querySelector('canvas'), { ...common, values: mapA });
    drawHeatmap(figB.querySelector('canvas'), { ...common, values: mapB });
    drawHeatmap(figDiff.querySelector('canvas'), { ...common, values: diff, diverging: true });
    figA.querySelector('figcaption').textContent = `A: ${this.#headName(a)}`;
    figB.querySelector('figcaption').textContent = `B: ${this.#headName(b)}`;
    figA.querySelector('canvas').setAttribute('aria-label', `Head A, ${this.#headName(a)}`);
    figB.querySelector('canvas').setAttribute('aria-label', `Head B, ${this.#headName(b)}`);
    figDiff.querySelector('canvas').setAttribute('aria-label', 'Difference A − B');
    const jsd = r.similarity[a * r.H + b];
    jsdNote.textContent = `Jensen–Shannon divergence between A and B (from the core, mean over rows): ${jsd.toFixed(3)} nats of at most ln 2 ≈ 0.693.`;
  }
}

/** What a head looks at, read from the core's statistics (weights not designed here). */
function describeByStatistics(s) {
  const pct = (x) => `${Math.round(x * 100)}%`;
  if (s.normalizedEntropy > 0.9) return `Nearly uniform: normalised entropy ${s.normalizedEntropy.toFixed(2)}.`;
  if (s.previousTokenShare > 0.4) return `Mostly the previous token (${pct(s.previousTokenShare)} of each row).`;
  if (s.diagonalShare > 0.4) return `Mostly the token itself (${pct(s.diagonalShare)}).`;
  if (s.firstTokenShare > 0.4) return `Mostly the first token (${pct(s.firstTokenShare)}).`;
  return `A mix: largest weight per row ${s.maxAttention.toFixed(2)} on average, mean distance ${s.meanDistance.toFixed(1)} tokens.`;
}

if (!customElements.get('mha-explorer')) customElements.define('mha-explorer', MhaExplorerElement);
