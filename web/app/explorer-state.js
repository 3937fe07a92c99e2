// The explorer's state, in one object: what is shown (source, layer, sentence, heads, the token
// followed) and what the core computed for it. The page's controller changes it with update();
// the lesson, the exports and the tests read it, and listen for its 'change' events
// (detail.keys: the fields that changed).
import { headMap } from '../sources/source.js';

export class ExplorerState extends EventTarget {
  constructor() {
    super();
    /** 'loading' | 'ready' | 'error' */
    this.status = 'loading';
    /** The HeadSource shown (web/sources/source.js). */
    this.source = null;
    /** { text, example, tokens, … } from source.sentence(). */
    this.sentence = null;
    /** The source's HeadResult for the sentence and layer shown. */
    this.result = null;
    this.selectedHead = 0;
    this.pair = { a: 0, b: 1 };
    /** The token whose row is highlighted (hover or focus), or -1. */
    this.hoverToken = -1;
    /** The heads switched off in the ablation panel (of the layer shown). */
    this.ablated = new Set();
    /** The similarity panel's last result (pretrained source): { a, b, similarity, heads }. */
    this.similarity = null;
    /** The token the W_O view follows when none is hovered. */
    this.focusToken = 0;
    /** Updates in flight (a sentence or source being computed). */
    this.busy = 0;
    this.timings = { lastUpdateMs: NaN, lastComputeMs: NaN, lastDrawMs: NaN, scriptStartMs: NaN, coreLoadedMs: NaN, readyMs: NaN, parts: {} };
  }

  /** Set fields and tell listeners which changed. */
  update(patch) {
    const keys = Object.keys(patch).filter((k) => this[k] !== patch[k]);
    Object.assign(this, patch);
    if (keys.length) this.dispatchEvent(new CustomEvent('change', { detail: { keys } }));
  }

  get numHeads() { return this.source ? this.source.numHeads : 0; }

  /** Head h's (L, L) map as computed, or null before the first result. */
  map(h = this.selectedHead) {
    return this.result ? headMap(this.result.weights, h) : null;
  }

  /** Names what the head views show (source, layer, head, sentence): a view drawn later says which it drew. */
  shownKey() {
    return this.source && this.sentence ? `${this.source.id}:${this.source.layer}:${this.selectedHead}:${this.sentence.text}` : '';
  }

  /** The selected head as the export needs it: title, sentence, tokens and its weights. */
  selectedHeadMap() {
    const head = this.selectedHead;
    return {
      head, title: this.source.title(head), sentence: this.sentence.text, source: this.source.id,
      tokens: this.sentence.tokens.map((t) => t.text), values: Array.from(this.map(head)),
    };
  }
}

/** The page's explorer state. */
export const explorer = new ExplorerState();
