// What the explorer's state says in words and numbers, for the page and the element alike: a
// head's title and text, progress, status lines, counts and formulas that follow the source's
// numbers of heads and layers. Pure functions of the controller's state (controller.js).

import { statisticsRows } from '../views/head-text.js';

/** @typedef {import('./controller.js').Explorer} Explorer */

const WORDS = ['No', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine', 'Ten', 'Eleven', 'Twelve'];

/** "Eight" for 8, "16" for 16: a count at the start of a sentence. @param {number} n */
export function countWord(n) {
  return WORDS[n] ?? String(n);
}

const SUBSCRIPTS = '₀₁₂₃₄₅₆₇₈₉';
/** head₁ … head₁₂: a subscript of any number. @param {number} n */
export function subscript(n) {
  return String(n).replace(/\d/g, (d) => SUBSCRIPTS[Number(d)]);
}

/** "Concat(head₁, …, head₄) × W_O" for a source of four heads. @param {number} numHeads */
export function concatFormula(numHeads) {
  return `Concat(head₁, …, head${subscript(numHeads)})`;
}

/**
 * The key/value head each query head reads, where query heads share them (grouped-query
 * attention: head h reads h / (H / G)); null where each head has its own.
 * @param {{ numHeads: number, numKvHeads?: number }} source
 * @returns {number[] | null}
 */
export function kvHeadsOf(source) {
  const H = source.numHeads;
  const G = source.numKvHeads ?? H;
  if (!(Number.isInteger(G) && G > 0 && G < H && H % G === 0)) return null;
  return Array.from({ length: H }, (_, h) => Math.floor(h / (H / G)));
}

/** "1, 2 and 4" (1-based heads). @param {number[]} heads */
const headList = (heads) => {
  const names = heads.map((h) => String(h + 1));
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
};

/**
 * What query head h shares: its key/value head and the other query heads that read it; null
 * where each head has its own.
 * @param {{ numHeads: number, numKvHeads?: number }} source
 * @param {number} h
 */
export function kvText(source, h) {
  const kv = kvHeadsOf(source);
  if (!kv) return null;
  const G = Math.max(...kv) + 1;
  const H = kv.length;
  const others = kv.flatMap((g, i) => (g === kv[h] && i !== h ? [i] : []));
  const kind = G === 1 ? 'multi-query attention: one key/value head for all' : `grouped-query attention: ${G} key/value heads for ${H} query heads, ${H / G} each`;
  return `Reads key/value head ${kv[h] + 1} of ${G} (${kind}). Query head${others.length > 1 ? 's' : ''} ${headList(others)} read${others.length > 1 ? '' : 's'} the same keys and values; each has its own W_Q, so their maps differ only by their queries.`;
}

/**
 * What a head of the source shown is and does, on the sentence shown: for the head views.
 * @param {Explorer} explorer  with a result
 * @param {number} h
 */
export function headText(explorer, h) {
  const { source, sentence, result } = explorer.shown();
  const stats = result.stats[h];
  const map = /** @type {Float32Array} */ (explorer.map(h));
  const text = source.describe(h, stats, sentence, map);
  return {
    title: source.title(h),
    short: source.short(h),
    focus: text.focus,
    typical: text.typical,
    how: text.how || '',
    statistics: statisticsRows(stats, { length: sentence.tokens.length, causal: source.causal }),
    check: source.check(h, map, sentence, stats) ?? null,
    kv: kvText(source, h),
  };
}

/** Bytes in words: "548 MB", "1.5 GB", "167 kB". @param {number} bytes */
export const sizeText = (bytes) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : bytes >= 1e6 ? `${Math.round(bytes / 1e6)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`);

/**
 * What opening a Hub repository fetches, in words: "openai-community/gpt2 at 607a30d: 3 files,
 * 548 MB, 548 MB to download; it fits in this tab's memory".
 * @param {import('../lib/models.js').HubPlan} plan
 */
export function planText(plan) {
  const { repo, commit, files, bytes, downloadBytes } = plan;
  const fetched = downloadBytes === 0 ? 'all kept in this browser' : downloadBytes === bytes ? `${sizeText(downloadBytes)} to download` : `${sizeText(downloadBytes)} to download, the rest kept in this browser`;
  return `${repo} at ${commit.slice(0, 7)}: ${files.length} files, ${sizeText(bytes)}, ${fetched}; it fits in this tab's memory`;
}

/**
 * A model's download in words: "weights.bin: 1.2 of 14.0 MB"; with a Hub repository's plan,
 * that first and the file's place among its files.
 * @param {{ file: string, loaded: number, total: number, plan?: import('../lib/models.js').HubPlan }} progress
 */
export function progressText({ file, loaded, total, plan }) {
  const amount = `${(loaded / 1e6).toFixed(1)} of ${total ? (total / 1e6).toFixed(1) : '?'} MB`;
  if (!plan) return `${file}: ${amount}`;
  const at = plan.files.findIndex((f) => f.file === file);
  return `${planText(plan)}. ${file}${at >= 0 ? ` (file ${at + 1} of ${plan.files.length})` : ''}: ${amount}`;
}

/** A sentence in a status line: quoted, cut after about 40 characters. @param {string} text */
function quoted(text) {
  return text.length > 40 ? `“${text.slice(0, 38).trimEnd()}…”` : `“${text}”`;
}

/**
 * What is shown, in one line, from the result itself: the heads and tokens of the weights the
 * core returned, the sentence, the source (and its layer), and the time and place of the compute.
 * The page's and the element's status lines.
 * @param {Explorer} explorer  with a result
 */
export function elementStatus(explorer) {
  const { source, sentence, result } = explorer.shown();
  const [H, L] = result.weights.shape;
  const layer = source.numLayers > 1 ? `, layer ${source.layer}` : '';
  return `${H} heads × ${L} tokens of ${quoted(sentence.text)}, d_model ${source.embedDim}, ${source.name}${layer}: ${explorer.timings.lastComputeMs.toFixed(1)} ms in the WebAssembly core${explorer.worker ? ' (in a Web Worker)' : ''}.`;
}

/**
 * The page's status line for the explorer's state, worked out again on every change: what loads
 * (the source's own note), what is computing, or what is shown (elementStatus).
 * @param {Explorer} explorer
 */
export function pageStatus(explorer) {
  if (explorer.errors.core) return `The WebAssembly core could not be loaded: ${explorer.errors.core}. Build it with "npm run build".`;
  if (explorer.loading) return explorer.loading.note || 'Loading…';
  if (!explorer.result) return 'Loading the WebAssembly attention core…';
  if (explorer.status === 'computing') return `Computing… (shown: ${elementStatus(explorer)})`;
  return `Ready: ${elementStatus(explorer)}`;
}

/** The lesson page's opening line, for the heads shown. @param {Explorer} explorer */
export function headsLede(explorer) {
  const H = explorer.numHeads;
  return `${countWord(H)} attention head${H === 1 ? '' : 's'}`;
}

/** The W_O panel's title, for the heads shown. @param {Explorer} explorer */
export function woTitle(explorer) {
  return `Combining the heads: ${concatFormula(explorer.numHeads)} × W`;
}
