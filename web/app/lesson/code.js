// Section: the code. The lesson's PyTorch snippet beside the same call through this project's
// JavaScript API. The JavaScript shown is the source text of `snippet` below
// (Function.prototype.toString), and the page runs that very function: what you read is what ran.
// It prints with console.log, so that pasted into this page's console it runs as shown; the page
// hands it a console of its own whose lines go to the output box.

import { el, section } from './dom.js';
import { loadMha } from '../../lib/index.js';

/** The JS API's entry as a URL a browser's console can import: this page's copy. */
const API_URL = new URL('../../lib/index.js', import.meta.url).href;

export const PYTORCH_SNIPPET = `import torch
import torch.nn as nn

multihead_attn = nn.MultiheadAttention(
    embed_dim=64, num_heads=8, batch_first=True)

x = torch.randn(1, 10, 64)   # 10 tokens, 64-dim embeddings
output, attn_weights = multihead_attn(
    query=x, key=x, value=x)   # self-attention
print(output.shape)          # torch.Size([1, 10, 64])
print(attn_weights.shape)    # torch.Size([1, 10, 10]):
                             # averaged over the heads

# Each of the 8 heads works in 64 / 8 = 8 dimensions
print(64 // 8)               # 8: d_k per head`;

/** @typedef {import('../../lib/index.js').AttentionConfig} AttentionConfig */
/** @typedef {import('../../lib/index.js').ForwardInput} ForwardInput */
/** @typedef {import('../../lib/index.js').ForwardResult} ForwardResult */
/** @typedef {import('../../lib/index.js').MultiHeadAttention} MultiHeadAttention */
/**
 * The snippet: the page's `console.log` writes a line to the output box.
 * @param {() => Promise<{ MultiHeadAttention: new (config: AttentionConfig) => Omit<MultiHeadAttention, 'forward'>
 *           & { forward(input: ForwardInput): ForwardResult & { weights: import('../../lib/index.js').Tensor } } }>} loadMha
 *   the API's loadMha, whose forward passes return weights (needWeights is true by default)
 * @param {{ log: (...values: unknown[]) => void }} console
 */
async function snippet(loadMha, console) {
  const mha = await loadMha();
  const multiheadAttn = new mha.MultiHeadAttention({
    embedDim: 64, numHeads: 8, batchFirst: true,
  });

  // 10 tokens, 64-dim embeddings (uniform noise here)
  const n = 1 * 10 * 64;
  const data = new Float32Array(n).map(() => Math.random() - 0.5);
  const x = { data, shape: [1, 10, 64] };
  const { output, weights } = multiheadAttn.forward({
    query: x, key: x, value: x,   // self-attention
  });
  console.log(output.shape);    // [1, 10, 64]
  console.log(weights.shape);   // [1, 10, 10]: averaged over the heads

  // Each of the 8 heads works in 64 / 8 = 8 dimensions
  console.log(multiheadAttn.headDim);   // 8: d_k per head
  multiheadAttn.dispose();        // frees the WebAssembly memory
}

/**
 * The body of `snippet` as readable source, after an import a browser's console runs (a dynamic
 * import of this page's copy of the API; top-level await), with the one a package user writes.
 */
export function snippetSource() {
  const text = snippet.toString();
  const body = text.slice(text.indexOf('{') + 1, text.lastIndexOf('}')).replace(/^\n/, '').replace(/\s+$/, '');
  const lines = body.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /** @type {RegExpMatchArray} */ (l.match(/^ */))[0].length));
  return `// In a project: import { loadMha } from 'mha-explorer';\nconst { loadMha } = await import('${API_URL}');\n\n${lines.map((l) => l.slice(indent)).join('\n')}`;
}

/** A value as a console shows it, on one line: arrays as [1, 10, 64]. @param {unknown} value @returns {string} */
function logText(value) {
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return `[${Array.from(/** @type {ArrayLike<unknown>} */ (value), logText).join(', ')}]`;
  return typeof value === 'string' ? value : String(value);
}

export function codeSection() {
  const outputBox = el('pre', { class: 'code-output', id: 'code-output', 'aria-live': 'polite', 'aria-label': 'Output of the JavaScript snippet' });
  const runButton = el('button', { type: 'button', class: 'button', id: 'code-run', text: 'Run again' });
  async function run() {
    /** @type {string[]} */
    const lines = [];
    const console = {
      log: (/** @type {unknown[]} */ ...values) => {
        lines.push(values.map(logText).join(' '));
        outputBox.textContent = lines.join('\n');
      },
    };
    outputBox.textContent = '';
    outputBox.classList.remove('error');
    runButton.disabled = true;
    const started = performance.now();
    try {
      // its types say what the snippet relies on: weights are returned (needWeights by default)
      await snippet(/** @type {Parameters<typeof snippet>[0]} */ (/** @type {unknown} */ (loadMha)), console);
      lines.push(`// ran in this page in ${(performance.now() - started).toFixed(1)} ms`);
      outputBox.textContent = lines.join('\n');
      outputBox.dataset.runs = String(Number(outputBox.dataset.runs || 0) + 1);
    } catch (error) {
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      outputBox.textContent = `${lines.join('\n')}\n${name}: ${message}`;
      outputBox.classList.add('error');
    } finally {
      runButton.disabled = false;
    }
  }
  runButton.addEventListener('click', run);
  const node = section('lesson-code', 'The code',
    el('p', { text: 'In PyTorch one module does all of it. The same call through this project\'s JavaScript API runs in this page, on the WebAssembly core, and prints the same shapes; pasted into this page\'s console (the browser\'s developer tools), it runs there as shown.' }),
    el('div', { class: 'code-pair' },
      el('figure', { class: 'code-card' }, el('figcaption', { text: 'PyTorch' }), el('pre', { class: 'code' }, el('code', { text: PYTORCH_SNIPPET }))),
      el('figure', { class: 'code-card' }, el('figcaption', {}, 'JavaScript, live in this page ', runButton),
        el('pre', { class: 'code', id: 'code-js' }, el('code', { text: snippetSource() })),
        el('div', { class: 'code-output-wrap' }, el('span', { class: 'code-output-label', text: 'Output' }), outputBox))),
    el('p', { class: 'note', text: 'The averaged map has shape (1, 10, 10) because PyTorch averages the 8 heads\' maps by default (average_attn_weights=True); pass averageAttnWeights: false (average_attn_weights=False) to get (1, 8, 10, 10), one map per head.' }));
  run();
  return node;
}
