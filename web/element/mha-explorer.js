// <mha-explorer>: the head-comparison explorer as one custom element. One script tag, no build:
//
//   <script type="module" src="…/web/element/mha-explorer.js"></script>
//   <mha-explorer sentence="The cat sat on the mat because it was tired." view="grid"></mha-explorer>
//
// Attributes (all optional; docs/element.md):
//   sentence       the text (the example sentences are pre-tagged; other text loads the tagger)   default the heads' first example
//   heads          designed | random | random:SEED | trained | pretrained | model | URL of a state_dict (.safetensors or .json)
//   layer          0-based layer of a model with several (trained, pretrained)     default 0
//   model-url      where the pretrained model's files are (a folder URL)            default the package's
//   model          a model on the Hugging Face Hub by its id (owner/name), kept in the browser's cache
//   hub-endpoint   the Hub's address for model (a mirror)                          default https://huggingface.co
//   tokenize-time-limit  ms a model's tokenizer may take on one text (model, model-url) default 5000
//   write          a causal model (model, model-url) writes this many tokens after the sentence; with
//                  temperature, top-k and write-seed sampled, else the most probable  default none
//   d-model        model width (random heads; designed heads are 64 wide)        default 64
//   num-heads      number of heads (random heads; a file's own config wins)       default 8
//   selected-head  1-based head shown in the single and compare views             default 1
//   compare-head   1-based second head of the compare view                        default next
//   view           single | grid | compare                                        default single
//   theme          light | dark | auto                                             default auto
//   height         CSS height (a number means px); content scrolls inside          default: content
//   worker         auto | always | never: compute in a Web Worker (auto: large inputs and models; never: none)
// Events (bubbling, composed): mha-head-selected { head, index, name }, mha-computed { … },
// mha-error { message }; the first two also as head-selected and computed, the names of 0.1.
//
// DOM bindings over an explorer (web/explorer/controller.js), as the lesson page is: the
// attributes go to it, what it holds is drawn with web/views. Several elements on a page share
// the core but nothing else. No globals beyond the element's name.

import { el } from '../views/dom.js';
import { themeColors } from '../views/theme.js';
import { headMaps, headMap } from '../sources/source.js';
import { EXAMPLES } from '../sources/examples.js';
import { NUM_HEADS } from '../sources/designed-heads.js';
import { Explorer } from '../explorer/controller.js';
import { headText, elementStatus, progressText, kvHeadsOf } from '../explorer/present.js';
import { positiveInteger, specFromAttributes } from '../explorer/sources.js';
import { loadOnce } from '../lib/load-once.js';
import { ELEMENT_CSS } from './styles.js';

/** @type {string[]} */
const VIEWS = ['single', 'grid', 'compare'];
const WORKER_MODES = ['auto', 'always', 'never'];
/** Work that has taken this long shows the progress indicator. */
const PROGRESS_DELAY_MS = 200;
/** The attributes that change what is computed (the others change only what is drawn). */
// (write, temperature, top-k, write-seed: what a causal model writes after the sentence, write.js)
const COMPUTED = ['sentence', 'heads', 'd-model', 'num-heads', 'layer', 'model-url', 'model', 'hub-endpoint', 'tokenize-time-limit', 'worker', 'write', 'temperature', 'top-k', 'write-seed'];

/** @typedef {'single' | 'grid' | 'compare'} View */
/**
 * The view modules' exports, merged (a view draws only with its own modules' functions).
 * @typedef {typeof import('../views/tabs.js') & typeof import('../views/head.js') & typeof import('../views/grid.js')
 *           & typeof import('../views/compare.js')} Views
 */
/** @typedef {import('../views/theme.js').Theme} Theme */
/**
 * The shadow DOM's parts (#build).
 * @typedef {{ input: HTMLInputElement, form: HTMLFormElement, views: HTMLDivElement, tabs: HTMLDivElement,
 *             canvas: HTMLCanvasElement, tooltip: HTMLDivElement, info: HTMLDivElement, single: HTMLDivElement,
 *             grid: HTMLDivElement, compare: HTMLDivElement, content: HTMLDivElement, progressText: HTMLSpanElement,
 *             progress: HTMLDivElement, body: HTMLDivElement, status: HTMLParagraphElement, frame: HTMLDivElement }} Ui
 */

// ---------------------------------------------------------------------------------------------
// Shared by every element on the page (module scope: no globals)

/** @type {CSSStyleSheet | null} */
let sharedSheet = null;
function styleSheet() {
  if (!sharedSheet) {
    sharedSheet = new CSSStyleSheet();
    sharedSheet.replaceSync(ELEMENT_CSS);
  }
  return sharedSheet;
}

// What each view draws with, loaded when the view is first shown (an embed downloads only its own).
const VIEW_MODULES = {
  single: () => [import('../views/tabs.js'), import('../views/head.js')],
  grid: () => [import('../views/grid.js')],
  compare: () => [import('../views/tabs.js'), import('../views/compare.js')],
};
/** A view's modules' exports, merged; loaded once per view. */
const loadView = loadOnce((/** @type {View} */ view) =>
  Promise.all(/** @type {Promise<object>[]} */ (VIEW_MODULES[view]())).then((modules) => /** @type {Views} */ (Object.assign({}, ...modules))));

/**
 * A 0-based layer from the attribute, or the text itself when it is not one (the explorer says so).
 * @param {string | null} value
 */
function layerAttribute(value) {
  if (value === null || value === '') return 0;
  return /^\d{1,4}$/.test(value.trim()) ? Number(value) : value;
}

// ---------------------------------------------------------------------------------------------

export class MhaExplorerElement extends HTMLElement {
  static get observedAttributes() {
    return ['selected-head', 'compare-head', 'view', 'theme', 'height', ...COMPUTED];
  }

  /** @type {ShadowRoot} */
  #root;
  #ui = /** @type {Ui} */ ({});
  #explorer = new Explorer({
    views: VIEWS,
    worker: () => {
      const mode = this.getAttribute('worker') ?? '';
      return WORKER_MODES.includes(mode) ? mode : 'auto';
    },
    fallback: null,
    limitSetting: 'the attribute tokenize-time-limit',
  });
  /** @type {import('../explorer/controller.js').Status} */
  #status = 'loading';
  /** @type {string | null} */
  #error = null;
  #generation = 0;
  #frame = 0;
  /** @type {ResizeObserver | null} */
  #resizeObserver = null;
  /** @type {MediaQueryList | null} */
  #darkQuery = null;
  /** @type {{ row: number, col: number } | null} */
  #hoverCell = null;
  /** The cell pointed at in the compared maps, and the result it belongs to.
   *  @type {{ cell: { row: number, col: number } | null, result: unknown } | null} */
  #pairHover = null;
  #connected = false;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.adoptedStyleSheets = [styleSheet()];
    this.#build();
    this.#explorer.addEventListener('change', (event) => this.#changed(/** @type {CustomEvent<{ keys: string[] }>} */ (event).detail.keys));
  }

  // -- attributes as properties ----------------------------------------------------------------

  /** The attribute; without it, the text shown (the first example of the heads' own sentences). */
  get sentence() { return this.getAttribute('sentence') ?? this.#explorer.sentence?.text ?? EXAMPLES[0].text; }
  set sentence(v) { this.setAttribute('sentence', v); }
  get heads() { return this.getAttribute('heads') ?? 'designed'; }
  set heads(v) { this.setAttribute('heads', v); }
  /** @returns {View} */
  get view() {
    const v = this.getAttribute('view') ?? '';
    return VIEWS.includes(v) ? /** @type {View} */ (v) : 'single';
  }
  set view(v) { this.setAttribute('view', v); }
  /** 1-based. */
  get selectedHead() { return this.#clampHead(positiveInteger(this.getAttribute('selected-head'), 1)); }
  /** @param {number} v */
  set selectedHead(v) { this.setAttribute('selected-head', String(v)); }
  get compareHead() {
    const H = this.#numHeads();
    const fallback = (this.selectedHead % H) + 1;
    return this.#clampHead(positiveInteger(this.getAttribute('compare-head'), fallback));
  }
  /** @param {number} v */
  set compareHead(v) { this.setAttribute('compare-head', String(v)); }
  get theme() { return this.getAttribute('theme') ?? 'auto'; }
  set theme(v) { this.setAttribute('theme', v); }
  /** 'loading' | 'computing' | 'ready' | 'error' */
  get status() { return this.#status; }
  /**
   * The last result: tokens, per-head weights (H, L, L) and statistics; null before the first.
   * @returns {import('./mha-explorer.js').ComputedDetail | null}
   */
  get result() {
    const x = this.#explorer;
    if (!this.#shown()) return null;
    const { source, sentence, result } = x.shown();
    const [H, L] = result.weights.shape;
    return {
      tokens: sentence.tokens.map((t) => t.text),
      numHeads: H,
      dModel: source.embedDim,
      source: source.id,
      weights: { data: result.weights.data.slice(), shape: [H, L, L] },
      statistics: result.stats.map((st) => ({ ...st })),
      worker: x.worker,
      ms: x.timings.lastComputeMs,
    };
  }

  /** Something computed, and no error since. */
  #shown() { return !this.#error && !!this.#explorer.result; }
  #numHeads() { return this.#explorer.result ? this.#explorer.numHeads : NUM_HEADS; }

  /** @param {number} h */
  #clampHead(h) {
    return Number.isInteger(h) ? Math.min(Math.max(h, 1), this.#numHeads()) : 1;
  }

  // -- lifecycle -------------------------------------------------------------------------------

  connectedCallback() {
    this.#connected = true;
    this.#applyTheme();
    this.#applyHeight();
    const observer = new ResizeObserver(() => this.#scheduleRender());
    observer.observe(this);
    this.#resizeObserver = observer;
    this.#recompute();
  }

  disconnectedCallback() {
    this.#connected = false;
    this.#resizeObserver?.disconnect();
    this.#darkQuery?.removeEventListener('change', this.#onSchemeChange);
    this.#generation += 1;
    this.#explorer.dispose();
  }

  /** @param {string} name @param {string | null} oldValue @param {string | null} newValue */
  attributeChangedCallback(name, oldValue, newValue) {
    if (!this.#connected || oldValue === newValue) return;
    if (name === 'theme') this.#applyTheme();
    else if (name === 'height') this.#applyHeight();
    else if (COMPUTED.includes(name)) this.#recompute();
    else this.#showHeads();
  }

  /** @param {string} name @param {unknown} detail @param {boolean} [alias] */
  #emit(name, detail, alias = true) {
    this.dispatchEvent(new CustomEvent(`mha-${name}`, { bubbles: true, composed: true, detail }));
    if (alias) this.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true, detail }));
  }

  // -- theme and size --------------------------------------------------------------------------

  #onSchemeChange = () => this.#applyTheme();

  #applyTheme() {
    const theme = this.theme;
    if (theme === 'auto' && !this.#darkQuery) {
      this.#darkQuery = matchMedia('(prefers-color-scheme: dark)');
      this.#darkQuery.addEventListener('change', this.#onSchemeChange);
    }
    const dark = theme === 'dark' || (theme === 'auto' && !!this.#darkQuery?.matches);
    this.classList.toggle('dark', dark);
    this.#scheduleRender();
  }

  #applyHeight() {
    const h = this.getAttribute('height');
    // CSSOM, not a style attribute in markup: allowed under a strict style-src
    this.style.height = h === null || h === '' ? '' : /^\d+(\.\d+)?$/.test(h) ? `${h}px` : h;
  }

  // -- the shadow DOM --------------------------------------------------------------------------

  #build() {
    const ui = this.#ui;
    ui.input = el('input', { type: 'text', maxLength: 600, 'aria-label': 'Sentence', placeholder: 'Type a sentence' });
    ui.form = el('form', { class: 'sentence-form', part: 'sentence-form' }, ui.input, el('button', { type: 'submit', text: 'Analyse' }));
    ui.form.addEventListener('submit', (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      const text = ui.input.value.trim();
      if (text) this.sentence = text;
    });
    ui.views = el('div', { class: 'views', role: 'group', 'aria-label': 'View' },
      ...VIEWS.map((v) => el('button', {
        type: 'button', text: v[0].toUpperCase() + v.slice(1), 'data-view': v, 'aria-pressed': 'false', onclick: () => { this.view = /** @type {View} */ (v); },
      })));
    ui.tabs = el('div', { class: 'tabs head-tabs', role: 'tablist', 'aria-label': 'Heads' });
    ui.canvas = el('canvas', { role: 'img', class: 'heatmap', part: 'heatmap' });
    ui.tooltip = el('div', { class: 'tooltip', hidden: true });
    ui.info = el('div', { class: 'info' });
    ui.single = el('div', { class: 'single' }, el('div', { class: 'canvas-wrap' }, ui.canvas, ui.tooltip), ui.info);
    ui.grid = el('div', { class: 'grid' });
    ui.compare = el('div', { class: 'compare' });
    ui.content = el('div', { class: 'content' });
    ui.progressText = el('span', { text: 'Computing…' });
    ui.progress = el('div', { class: 'progress', role: 'progressbar', 'aria-label': 'Computing', hidden: true },
      el('div', { class: 'bar' }), ui.progressText);
    ui.body = el('div', { class: 'body', part: 'body' }, ui.content, ui.progress);
    ui.status = el('p', { class: 'status', role: 'status', 'aria-live': 'polite', text: 'Loading the WebAssembly attention core…' });
    ui.frame = el('div', { class: 'frame', part: 'frame' },
      el('div', { class: 'toolbar' }, ui.form, ui.views), ui.tabs, ui.body);
    // the status line below the frame, not in it: in a fixed height the frame scrolls above it
    this.#root.append(ui.frame, ui.status);
  }

  // -- computing -------------------------------------------------------------------------------

  /**
   * @param {import('../explorer/controller.js').Status} status
   * @param {string} message
   * @param {boolean} [isError]
   */
  #setStatus(status, message, isError = false) {
    this.#status = status;
    this.setAttribute('aria-busy', String(status === 'loading' || status === 'computing'));
    this.#ui.status.textContent = message;
    this.#ui.status.classList.toggle('error', isError);
  }

  /** The explorer's progress, for the indicator. @param {string[]} keys */
  #changed(keys) {
    const { loading, progress } = this.#explorer;
    if (keys.includes('progress') && progress) this.#download = `Loading ${progressText(progress)}`;
    // while a source loads, the status line says what for (the views are covered by the indicator)
    if (keys.includes('loading') && loading?.note && this.#status !== 'error') this.#ui.status.textContent = loading.note;
  }

  #download = '';

  /**
   * Wrap slow work in the progress indicator: it shows only after 200 ms.
   * @template T
   * @param {string} label
   * @param {() => Promise<T>} work
   * @returns {Promise<T>}
   */
  async #withProgress(label, work) {
    const started = performance.now();
    const { progress, progressText: text } = this.#ui;
    const timer = setInterval(() => {
      const ms = performance.now() - started;
      if (ms < PROGRESS_DELAY_MS) return;
      progress.hidden = false;
      const note = this.#explorer.loading?.note;
      text.textContent = [note, this.#download].filter(Boolean).join(' ') || `${label}… ${(ms / 1000).toFixed(1)} s`;
    }, 100);
    try {
      return await work();
    } finally {
      clearInterval(timer);
      progress.hidden = true;
      this.#download = '';
    }
  }

  /**
   * What the attributes ask the explorer for; without a sentence, the first example of the
   * source's own sentences (the trained model reads only its grammar's words).
   * @returns {import('../explorer/controller.js').WantedState}
   */
  #wanted() {
    const get = (/** @type {string} */ name) => this.getAttribute(name);
    return {
      source: specFromAttributes(get, document.baseURI),
      layer: layerAttribute(get('layer')),
      sentence: get('sentence') ?? 0,
      // the attributes as written, read by the model source (web/sources/write-state.js)
      write: get('write') === null ? null : get,
    };
  }

  async #recompute() {
    const generation = ++this.#generation;
    const explorer = this.#explorer;
    this.#ui.input.value = this.sentence;
    try {
      this.#setStatus(explorer.result ? 'computing' : 'loading', explorer.result ? 'Computing…' : 'Loading the WebAssembly attention core…');
      // the attributes are read after this task: events never fire from inside attribute changes or connectedCallback
      const problems = await this.#withProgress('Computing', () => Promise.all([
        Promise.resolve().then(() => explorer.setState(this.#wanted())), loadView(this.view)]).then(([p]) => p));
      if (generation !== this.#generation) return; // superseded by a newer change
      const problem = problems.find((p) => p.field !== 'view' && p.field !== 'worker');
      if (problem || !explorer.result) throw new Error(problem ? problemText(problem) : 'nothing was computed');
      this.#error = null;
      this.#ui.input.value = this.sentence;
      this.#setStatus('ready', elementStatus(explorer));
      // the panel "The model writes on", in the shadow DOM, for a model that writes on
      if (explorer.source?.writes) {
        import('./write.js').then((m) => m.showElementWriting(this, explorer),
          (e) => { if (generation === this.#generation && this.#shown()) this.#setStatus('ready', `${elementStatus(explorer)} The panel to write on could not be loaded: ${e}`); });
      }
      this.#showHeads();
      this.#emit('computed', this.result);
    } catch (error) {
      if (generation !== this.#generation) return;
      const reported = error ? /** @type {{ message?: unknown }} */ (error).message : undefined;
      const message = reported ? String(reported) : String(error);
      this.#error = message;
      this.#setStatus('error', `Cannot show this: ${message}`, true);
      this.#ui.content.replaceChildren();
      this.#ui.tabs.replaceChildren();
      this.#ui.tabs.dataset.names = '';
      this.#emit('error', { message }, false);
    }
  }

  /** The selected and compared heads of the attributes, on the explorer; then draw. */
  #showHeads() {
    if (!this.#shown()) return;
    const explorer = this.#explorer;
    const a = this.selectedHead - 1;
    const b = this.compareHead - 1;
    if (explorer.selectedHead !== a) explorer.selectHead(a);
    explorer.setPair(a, b);
    explorer.setView(this.view);
    this.#renderNow();
  }

  // -- rendering -------------------------------------------------------------------------------

  #scheduleRender() {
    if (!this.#shown()) return;
    cancelAnimationFrame(this.#frame);
    this.#frame = requestAnimationFrame(() => this.#renderNow());
  }

  /** @type {Views | null} the loaded view modules, merged */
  #views = null;
  #pointerFollowed = false;

  #renderNow() {
    cancelAnimationFrame(this.#frame);
    if (!this.#shown()) return;
    const view = this.view;
    loadView(view).then((views) => {
      this.#views = views;
      this.#draw(view);
    }).catch((error) => this.#setStatus('error', `Cannot show this view: ${error.message}`, true));
  }

  /** @param {View} view */
  #draw(view) {
    const views = this.#views;
    if (!this.#shown() || view !== this.view || !views) return;
    for (const b of this.#ui.views.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.view === view));
    const { source } = this.#explorer.shown();
    this.#ui.tabs.hidden = view === 'grid';
    if (view !== 'grid') {
      views.renderHeadTabs(this.#ui.tabs, {
        count: this.#numHeads(), selected: this.selectedHead - 1, shortOf: (h) => source.short(h), titleOf: (h) => source.title(h),
        onSelect: (h, { focus }) => this.#selectHead(h + 1, focus),
      });
    }
    const theme = themeColors(this, 'mha-');
    const width = Math.max(160, this.#ui.body.clientWidth || this.clientWidth - 24 || 600);
    const box = { single: this.#ui.single, grid: this.#ui.grid, compare: this.#ui.compare }[view];
    if (this.#ui.content.firstChild !== box) this.#ui.content.replaceChildren(box);
    if (view === 'grid') this.#renderGrid(views, theme, width);
    else if (view === 'compare') this.#renderCompare(views, theme, width);
    else this.#renderSingle(views, theme, width);
  }

  /** @param {number} head  1-based @param {boolean} [focus] */
  #selectHead(head, focus = false) {
    if (head !== this.selectedHead) this.selectedHead = head; // the attribute change draws it
    if (focus) this.#views?.focusHeadTab?.(this.#ui.tabs, head - 1);
    this.#emit('head-selected', { head, index: head - 1, name: this.#explorer.shown().source.title(head - 1) });
  }

  /** @param {Views} views @param {Theme} theme @param {number} width */
  #renderSingle(views, theme, width) {
    const explorer = this.#explorer;
    const { sentence, result } = explorer.shown();
    if (!this.#pointerFollowed) {
      this.#pointerFollowed = true;
      views.followPointer(this.#ui.canvas, this.#ui.tooltip, {
        labels: () => this.#explorer.shown().sentence.tokens.map((t) => t.text),
        onCell: (cell) => { this.#hoverCell = cell; this.#scheduleRender(); },
      });
    }
    const h = this.selectedHead - 1;
    const wide = width >= 620;
    const labels = sentence.tokens.map((t) => t.text);
    const hover = this.#hoverCell;
    const text = headText(explorer, h);
    views.renderHeadMap(this.#ui.canvas, {
      values: headMap(result.weights, h), labels, width: wide ? Math.min(width - 250, 640) : width, maxCell: 44, theme,
      title: text.title, hoverCell: hover, highlightRow: hover ? hover.row : -1,
    });
    views.renderHeadInfo(this.#ui.info, { title: text.title, focus: text.focus, typical: text.typical, statistics: text.statistics, check: text.check, kv: text.kv });
  }

  /** @param {Views} views @param {Theme} theme @param {number} width */
  #renderGrid(views, theme, width) {
    const { sentence, result, source } = this.#explorer.shown();
    views.renderHeadGrid(this.#ui.grid, {
      maps: headMaps(result.weights), length: sentence.tokens.length, selected: this.selectedHead - 1, width, maxCell: 24, theme,
      shortOf: (h) => source.short(h), onSelect: (h) => this.#selectHead(h + 1), kvHeads: kvHeadsOf(source),
    });
  }

  /** @param {Views} views @param {Theme} theme @param {number} width */
  #renderCompare(views, theme, width) {
    const { sentence, result, source } = this.#explorer.shown();
    const hover = this.#pairHover && this.#pairHover.result === result ? this.#pairHover.cell : null;
    views.renderCompare(this.#ui.compare, {
      maps: headMaps(result.weights), length: sentence.tokens.length, labels: sentence.tokens.map((t) => t.text),
      a: this.selectedHead - 1, b: this.compareHead - 1, similarity: result.similarity, width, theme,
      hoverCell: hover, highlightRow: hover ? hover.row : -1,
      onHover: (cell) => { this.#pairHover = { cell, result }; this.#scheduleRender(); },
      shortOf: (h) => source.short(h), titleOf: (h) => source.title(h), kvHeads: kvHeadsOf(source),
      onChange: (a, b) => {
        if (a + 1 !== this.selectedHead) this.#selectHead(a + 1);
        this.compareHead = b + 1;
      },
    });
  }
}

/** A problem the explorer had with the attributes, in the attributes' words. @param {import('../explorer/controller.js').Problem} p */
function problemText(p) {
  if (p.field === 'layer') return `layer must be ${p.expected}, got "${p.value}"`;
  if (p.message) return p.message;
  return `${p.field} ${JSON.stringify(p.value)} is not ${p.expected}`;
}

if (!customElements.get('mha-explorer')) customElements.define('mha-explorer', MhaExplorerElement);
