// The page's explorer (web/explorer/controller.js): the parts of the page a link can name are its
// views. The lesson, the exports and the tests read it.
import { Explorer } from '../explorer/controller.js';

/** The panels a link's view= scrolls to. */
/** @type {Record<string, string>} */
export const PAGE_VIEWS = { single: '#head-panel', grid: '#small-multiples', compare: '#compare-view', wo: '#wo-view' };

export const explorer = new Explorer({
  views: Object.keys(PAGE_VIEWS), worker: 'auto', fallback: { id: 'designed' },
  limitSetting: 'the tokenizer time limit under “Open a model from the Hugging Face Hub”',
});
