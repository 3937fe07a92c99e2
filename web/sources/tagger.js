// The lesson's sentences as tagged tokens: the example sentences were tagged at build time
// (examples.tagged.js); other text goes to the compromise part-of-speech tagger (about 137 KB
// gzipped), loaded once, when first needed. In a page the tagger runs in a Web Worker of its own
// (tagger-worker-entry.js): building its lexicon takes a few hundred milliseconds the page would
// otherwise be frozen for. In Node.js, or where no worker can start, it runs here.
import { loadOnce } from '../lib/load-once.js';
import { connectWorker } from '../lib/rpc.js';
import { isNode } from '../lib/wasm-module.js';
import { TAGGED_EXAMPLES } from './examples.tagged.js';
import { tagText } from './tokens.js';

const loadCompromise = loadOnce(async () => {
  try {
    return (await import('../vendor/compromise-three.mjs')).default;
  } catch (error) {
    throw new Error(`The part-of-speech tagger (web/vendor/compromise-three.mjs; run "node scripts/build/vendor.js") could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
});

/** compromise's default export, loaded once (a failed load is tried again on the next call). */
export function loadTagger() {
  return loadCompromise('compromise');
}

/** The tagger's worker, started once a page; null where workers cannot run or it failed to start. */
const taggerWorker = loadOnce(async () => {
  if (typeof Worker !== 'function' || isNode()) return null;
  try {
    // '../sources/' holds from this file and from the embed bundle in web/lib/
    const worker = new Worker(new URL('../sources/tagger-worker-entry.js', import.meta.url), { type: 'module', name: 'mha-tagger' });
    return connectWorker(worker, 'the tagger\'s worker (web/sources/tagger-worker-entry.js)');
  } catch {
    return null; // a worker barred here (another origin's script, a policy): the tagger runs on this thread
  }
});

/** Raw tagged tokens of a text: pre-tagged for the examples, else from the tagger. @param {string} text */
export async function tagSentence(text) {
  const stored = /** @type {Record<string, { text: string, tags: string[] }[]>} */ (TAGGED_EXAMPLES)[text];
  if (stored) return stored;
  const rpc = await taggerWorker('tagger');
  if (rpc && !rpc.failed) {
    try {
      return /** @type {{ text: string, tags: string[] }[]} */ (await rpc.request('tag', text));
    } catch (error) {
      // a worker that could not load (its script refused) leaves the tagging to this thread
      if (!rpc.failed) throw error;
    }
  }
  return tagText(await loadTagger(), text);
}
