// Types of <mha-explorer> (web/element/mha-explorer.js; the package's "mha-explorer/element" entry).
import type { HeadStatistics } from '../lib/index.js';

/** `mha-head-selected`: a head was chosen (a tab, a grid cell, or the arrow keys). */
export interface HeadSelectedDetail {
  /** 1-based, as shown (H1 … H8) and as the `selected-head` attribute takes it. */
  head: number;
  /** 0-based index into the weights. */
  index: number;
  /** e.g. "Head 5 – Coreference: pronoun → noun". */
  name: string;
}

/** `mha-computed`: the heads were computed for the current attributes (also the `result` property). */
export interface ComputedDetail {
  tokens: string[];
  numHeads: number;
  dModel: number;
  /** Where the weights came from (the `heads` attribute: a URL is 'file'). */
  source: 'designed' | 'random' | 'file' | 'trained' | 'pretrained' | 'model';
  /** Attention weights per head, (H, L, L) row-major. */
  weights: { data: Float32Array; shape: [number, number, number] };
  /** The core's statistics of every head. */
  statistics: HeadStatistics[];
  /** Computed in a Web Worker. */
  worker: boolean;
  /** Time of the forward pass and the statistics, ms. */
  ms: number;
}

/** The element's events (bubbling, composed); `head-selected` and `computed` are aliases of the mha- names. */
export interface MhaExplorerEventMap extends HTMLElementEventMap {
  'mha-head-selected': CustomEvent<HeadSelectedDetail>;
  'mha-computed': CustomEvent<ComputedDetail>;
  /** Bad attributes, a weights file that does not load, a sentence that is too long… (no unprefixed alias). */
  'mha-error': CustomEvent<{ message: string }>;
  'head-selected': CustomEvent<HeadSelectedDetail>;
  computed: CustomEvent<ComputedDetail>;
}

/**
 * `<mha-explorer>`: the head-comparison explorer. Every attribute is optional and has a
 * property of the same name in camelCase.
 *
 * @example
 * ```html
 * <script type="module" src="node_modules/mha-explorer/web/element/mha-explorer.js"></script>
 * <mha-explorer sentence="The cat sat on the mat because it was tired." view="grid"></mha-explorer>
 * ```
 */
export declare class MhaExplorerElement extends HTMLElement {
  static readonly observedAttributes: string[];
  /**
   * Attribute `sentence`: the text; example sentences are pre-tagged, other text loads the tagger.
   * Without the attribute, the text shown: the first example of the heads' sentences.
   */
  sentence: string;
  /** Attribute `heads`: `designed` | `random` | `random:SEED` | `trained` | `pretrained` | `model` | URL of a .safetensors or .json state_dict. */
  heads: string;
  /** Attribute `view`. */
  view: 'single' | 'grid' | 'compare';
  /** Attribute `selected-head`, 1-based. */
  selectedHead: number;
  /** Attribute `compare-head`, 1-based (default: the head after `selectedHead`). */
  compareHead: number;
  /** Attribute `theme`. */
  theme: 'light' | 'dark' | 'auto' | string;
  /** Where the element is: 'loading' (the core), 'computing', 'ready' or 'error'. */
  readonly status: 'loading' | 'computing' | 'ready' | 'error';
  /** The last result (a copy); null before the first. */
  readonly result: ComputedDetail | null;
  addEventListener<K extends keyof MhaExplorerEventMap>(type: K, listener: (this: MhaExplorerElement, ev: MhaExplorerEventMap[K]) => any, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof MhaExplorerEventMap>(type: K, listener: (this: MhaExplorerElement, ev: MhaExplorerEventMap[K]) => any, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'mha-explorer': MhaExplorerElement;
  }
}
