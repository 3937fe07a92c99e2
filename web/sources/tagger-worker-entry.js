// The part-of-speech tagger's worker (started by tagger.js): it loads compromise once and answers
// tag(text) with the raw tagged tokens ({ text, tags }[]) tagText gives.
import { serveRequests } from '../lib/rpc.js';
import { loadTagger } from './tagger.js';
import { tagText } from './tokens.js';

serveRequests(async (op, /** @type {any[]} */ args) => {
  if (op === 'tag') return tagText(await loadTagger(), String(args[0]));
  throw new Error(`unknown request ${op}`);
});
