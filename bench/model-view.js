// The page's model view timed in Chromium: a GPT-2-layout model of 12 layers × 12 heads (width
// 96, the page's example tokenizer; weights drawn at GPT-2's initialisation from a fixed seed;
// GPT-2's 1,024 positions) opened in the lesson page like a user's folder, a sentence of 32
// tokens (or --tokens N, up to 1,024) computed by the core, and 144 maps of "Every layer and
// head" drawn again and again: the median of the draws, and one draw of every view of the page
// (as a new sentence draws them) with the model view's part of it. Drawing does not depend on
// the width: GPT-2 small's 144 maps at 1,024 tokens are drawn as these are (each layer's maps
// max-pooled by the core to 128 a side; the layer in view in full).
//
//   node bench/model-view.js [--json] [--draws N] [--tokens N]
//
// Prints one line (or a JSON object): layers, heads, tokens, first draw and median draw in ms.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const SHAPE = { layers: 12, heads: 12, width: 96, positions: 1024 };

/** A 32-token text for the example tokenizer (byte-level BPE of 377 entries), repeated for longer runs. */
const TEXT = 'the king follows himself and each woman helps herself at dawn in the village.';

export async function benchModelView({ draws = 30, tokens = 32 } = {}) {
  process.env.MHA_BROWSER = 'chromium';
  const { startWeb, stopWeb } = await import(path.join(repoRoot, 'tests', 'browser', 'driver.js'));
  const { server, browser } = await startWeb({ needs: ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_models.wasm'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(server.url);
    await page.waitForFunction(() => document.body.dataset.status === 'ok', null, { timeout: 60000 });
    return await page.evaluate(async ({ shape, text, draws: n, tokens }) => {
      const { explorer } = await import('/app/main.js');
      const { render } = await import('/app/draw.js');
      const tokenizer = await (await fetch('/examples/models/gpt2-lesson/tokenizer.json')).text();
      const V = JSON.parse(tokenizer).model.vocab ? Object.keys(JSON.parse(tokenizer).model.vocab).length : 377;
      const E = shape.width;
      const P = shape.positions;
      // mulberry32 and Box–Muller: N(0, 0.02²) as GPT-2 initialises its weights
      let seed = 20261202;
      const uniform = () => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
      const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()) * 0.02;
      /** @type {[string, number[], 'normal' | 'ones' | 'zeros'][]} */
      const tensors = [['transformer.wte.weight', [V, E], 'normal'], ['transformer.wpe.weight', [P, E], 'normal']];
      for (let l = 0; l < shape.layers; l += 1) {
        const p = `transformer.h.${l}.`;
        tensors.push([`${p}ln_1.weight`, [E], 'ones'], [`${p}ln_1.bias`, [E], 'zeros'],
          [`${p}attn.c_attn.weight`, [E, 3 * E], 'normal'], [`${p}attn.c_attn.bias`, [3 * E], 'zeros'],
          [`${p}attn.c_proj.weight`, [E, E], 'normal'], [`${p}attn.c_proj.bias`, [E], 'zeros'],
          [`${p}ln_2.weight`, [E], 'ones'], [`${p}ln_2.bias`, [E], 'zeros'],
          [`${p}mlp.c_fc.weight`, [E, 4 * E], 'normal'], [`${p}mlp.c_fc.bias`, [4 * E], 'zeros'],
          [`${p}mlp.c_proj.weight`, [4 * E, E], 'normal'], [`${p}mlp.c_proj.bias`, [E], 'zeros']);
      }
      tensors.push(['transformer.ln_f.weight', [E], 'ones'], ['transformer.ln_f.bias', [E], 'zeros']);
      /** @type {Record<string, unknown>} */
      const header = {};
      let offset = 0;
      for (const [name, dims] of tensors) {
        const bytes = 4 * dims.reduce((a, b) => a * b, 1);
        header[name] = { dtype: 'F32', shape: dims, data_offsets: [offset, offset + bytes] };
        offset += bytes;
      }
      let json = JSON.stringify(header);
      json += ' '.repeat((8 - (json.length % 8)) % 8);
      const file = new Uint8Array(8 + json.length + offset);
      new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
      file.set(new TextEncoder().encode(json), 8);
      const data = new Float32Array(file.buffer, 8 + json.length, offset / 4);
      let at = 0;
      for (const [, dims, fill] of tensors) {
        const count = dims.reduce((a, b) => a * b, 1);
        for (let i = 0; i < count; i += 1) data[at + i] = fill === 'normal' ? normal() : fill === 'ones' ? 1 : 0;
        at += count;
      }
      const config = {
        architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
        n_positions: P, n_ctx: P, n_embd: E, n_head: shape.heads, n_layer: shape.layers, n_inner: null, vocab_size: V,
        scale_attn_weights: true, bos_token_id: V - 1, eos_token_id: V - 1,
      };
      await explorer.openModel({ 'config.json': JSON.stringify(config), 'model.safetensors': file, 'tokenizer.json': tokenizer }, 'bench-12x12');
      if (explorer.source?.id !== 'model') throw new Error(`the model did not open: ${explorer.errors.source}`);
      // a sentence of exactly shape.tokens tokens: the text's first tokens, decoded back (the page
      // opens a model in a Web Worker, where every call is answered asynchronously)
      const model = explorer.source.model;
      const long = Array.from({ length: Math.ceil(tokens / 16) }, () => text).join(' ');
      const ids = (await model.encode(long)).slice(0, tokens);
      if (ids.length < tokens) throw new Error(`the bench text has ${ids.length} tokens, fewer than ${tokens}`);
      const words = (await model.read(ids)).texts.join('');
      const c0 = performance.now();
      await explorer.selectSentence(words);
      const computeMs = performance.now() - c0;
      const T = explorer.sentence.tokens.length;
      await new Promise((resolve) => requestAnimationFrame(() => resolve(null)));
      // every view of the page drawn once, as a change of sentence draws them (the model view among them)
      const t0 = performance.now();
      render();
      const all = performance.now() - t0;
      const first = explorer.timings.parts.layers;
      const times = [];
      for (let i = 0; i < n; i += 1) {
        const t0 = performance.now();
        render(['layers']);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const cells = document.querySelectorAll('#model-grid .model-cell').length;
      return { layers: shape.layers, heads: shape.heads, tokens: T, cells, computeMs, firstMs: first, allViewsMs: all, medianMs: times[Math.floor(n / 2)], draws: n, userAgent: navigator.userAgent };
    }, { shape: SHAPE, text: TEXT, draws, tokens });
  } finally {
    await stopWeb({ server, browser });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const draws = args.includes('--draws') ? Number(args[args.indexOf('--draws') + 1]) : 30;
  const tokens = args.includes('--tokens') ? Number(args[args.indexOf('--tokens') + 1]) : 32;
  const result = await benchModelView({ draws, tokens });
  if (args.includes('--json')) console.log(JSON.stringify(result));
  else console.log(`model view in Chromium: ${result.layers} layers × ${result.heads} heads = ${result.cells} maps at ${result.tokens} tokens: median of ${result.draws} draws ${result.medianMs.toFixed(1)} ms; every view of the page ${result.allViewsMs.toFixed(1)} ms, the model view's part ${result.firstMs.toFixed(1)} ms; the text computed and shown ${result.computeMs.toFixed(0)} ms`);
}
