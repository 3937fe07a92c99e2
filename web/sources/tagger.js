// The lesson's sentences as tagged tokens: the example sentences were tagged at build time
// (examples.tagged.js); other text loads the compromise part-of-speech tagger, once, when first
// needed (about 137 KB gzipped).
import { loadOnce } from '../lib/load-once.js';
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

/** Raw tagged tokens of a text: pre-tagged for the examples, else from the tagger. @param {string} text */
export async function tagSentence(text) {
  const stored = /** @type {Record<string, { text: string, tags: string[] }[]>} */ (TAGGED_EXAMPLES)[text];
  if (stored) return stored;
  return tagText(await loadTagger(), text);
}
