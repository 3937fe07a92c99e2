// The page's "The model writes on" panel (web/views/write-panel.js, loaded when a model that
// writes on is first shown), bound to the explorer: its buttons ask writeOn and clearWriting
// (web/explorer/write.js); each change of the explorer updates it.
import { explorer } from './explorer.js';
import { clearWriting, writeOf, writeOn } from '../explorer/write.js';

/** @type {{ update: (state: import('../views/write-panel.js').WritePanelState) => void } | null} */
let panel = null;
/** @type {Promise<void> | null} */
let loading = null;

/** A link's writing for a model the link cannot open (from files or a URL), until one is shown. @type {import('../sources/source.js').WriteState | null} */
let pending = null;

/** Write `write` after the sentence once a model that writes on is shown (opened again from its files). @param {import('../sources/source.js').WriteState} write */
export function keepLinkWrite(write) { pending = write; }

/** Show or hide the panel and draw the explorer's writing into it. */
export function showWriting() {
  const container = /** @type {HTMLElement} */ (document.getElementById('write-panel'));
  const { source, sentence } = explorer;
  container.hidden = !source?.writes || !sentence;
  if (container.hidden || !source || !sentence) return;
  if (pending && explorer.busy === 0) {
    const write = pending;
    pending = null;
    explorer.setState({ write });
    return;
  }
  if (!panel) {
    loading ??= import('../views/write-panel.js').then(({ mountWritePanel }) => {
      panel = mountWritePanel(container, {
        idPrefix: 'write',
        onWrite: (steps, sampling) => { writeOn(explorer, steps, sampling); },
        onClear: () => { clearWriting(explorer); },
      });
      showWriting();
    }, (error) => {
      // a module that did not arrive (the network, a page being left): said in the panel's
      // place, and asked for again at the next change
      loading = null;
      container.textContent = `The panel "The model writes on" could not be loaded (${error instanceof Error ? error.message : String(error)}).`;
    });
    return;
  }
  const write = writeOf(explorer);
  const tokens = /** @type {Array<{ text: string, word?: number, written?: unknown }>} */ (sentence.tokens);
  panel.update({
    write, busy: explorer.busy > 0, error: /** @type {string | undefined} */ (sentence.writeError) ?? null, tokens,
    maxSteps: source.maxTokens - (tokens.length - (write?.steps ?? 0)),
  });
}
