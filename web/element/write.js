// <mha-explorer>'s "The model writes on" panel (web/views/write-panel.js), loaded when a model that
// writes on is shown: a box after the views in the shadow DOM, drawn at each change of the
// element's explorer and hidden when the model shown does not write on. Its buttons set the
// element's attributes (write, temperature, top-k, write-seed), which the element computes like
// any other, so that the attributes always say what is written.
import { mountWritePanel } from '../views/write-panel.js';
import { nextWrite, writeOf } from '../explorer/write.js';

const WRITE = ['write', 'temperature', 'top-k', 'write-seed'];

/** @type {WeakMap<HTMLElement, () => void>} the <mha-explorer>s with a panel: how to draw it */
const shown = new WeakMap();

/**
 * @param {HTMLElement} element  the <mha-explorer> (its shadow root is open)
 * @param {import('../explorer/controller.js').Explorer} explorer  its explorer
 */
export function showElementWriting(element, explorer) {
  let draw = shown.get(element);
  if (!draw) {
    const box = document.createElement('div');
    box.className = 'write-panel';
    box.setAttribute('part', 'write');
    /** @type {HTMLElement} */ (element.shadowRoot?.querySelector('.frame')).append(box);
    const panel = mountWritePanel(box, {
      onWrite: (steps, sampling) => {
        const write = nextWrite(writeOf(explorer), steps, sampling);
        for (const [name, value] of /** @type {Array<[string, number | undefined]>} */ ([['temperature', write.temperature], ['top-k', write.topK], ['write-seed', write.seed], ['write', write.steps]])) {
          if (value === undefined) element.removeAttribute(name);
          else element.setAttribute(name, String(value));
        }
      },
      onClear: () => { for (const name of WRITE) element.removeAttribute(name); },
    });
    draw = () => {
      const { source, sentence, busy } = explorer;
      box.hidden = !source?.writes || !sentence;
      if (box.hidden || !source || !sentence) return;
      const write = writeOf(explorer);
      const tokens = /** @type {Array<{ text: string, word?: number, written?: unknown }>} */ (sentence.tokens);
      panel.update({
        write, busy: busy > 0, error: /** @type {string | undefined} */ (sentence.writeError) ?? null, tokens,
        maxSteps: source.maxTokens - (tokens.length - (write?.steps ?? 0)),
      });
    };
    shown.set(element, draw);
    explorer.addEventListener('change', (event) => {
      if (/** @type {CustomEvent<{ keys: string[] }>} */ (event).detail.keys.some((k) => ['busy', 'sentence', 'source'].includes(k))) draw?.();
    });
  }
  draw();
}
