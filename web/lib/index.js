// The JavaScript API over the WebAssembly core: shapes, defaults, errors and ownership.
// Types and documentation: index.d.ts beside this file.
import { MhaError, statusCodes } from './errors.js';
import { loadOnce } from './load-once.js';
import { heapViews, instantiateWasmModule, isNode, readTensor } from './wasm-module.js';
import { onOtherOrigin } from './start-worker.js';
import { ablateArg, describe, flag, maskArg, optionalInteger, positiveInteger, same, tensorArg } from './tensors.js';

/** @typedef {import('./index.js').MhaModule} MhaModule */
/** @typedef {import('./index.js').LoadOptions} LoadOptions */
/** @typedef {import('./index.js').Tensor} Tensor */
/** @typedef {import('./index.js').TensorInput} TensorInput */
/** @typedef {import('./index.js').AttentionConfig} AttentionConfig */
/** @typedef {import('./index.js').ForwardInput} ForwardInput */
/** @typedef {import('./index.js').ForwardResult} ForwardResult */
/** @typedef {import('./index.js').StatisticsOptions} StatisticsOptions */
/** @typedef {import('./wasm/mha_core.js').CoreModule} CoreModule */
/** @typedef {import('./wasm/mha_core.js').ThreadsCoreModule} ThreadsCoreModule */
/** @typedef {import('./wasm/mha_core.js').Attention} Attention */
/** @typedef {import('./wasm/mha_core.js').ForwardCall} ForwardCall */
/** @typedef {import('./wasm/mha_core.js').InputBuffers} InputBuffers */
/** @typedef {import('./wasm/mha_core.js').OutputShapes} OutputShapes */
/** @typedef {import('./wasm/mha_core.js').MapBuffers} MapBuffers */

export { MhaError };
export { loadStateDictFile, parseSafetensors, toSafetensors } from './safetensors.js';

/**
 * Start a Web Worker with the core: the same API, every call returning a promise (worker.js,
 * the page's side; the worker runs worker-entry.js). Loaded on first use, so pages that compute
 * on the main thread never download it.
 * @param {import('./index.js').WorkerOptions} [options]
 */
export async function createWorkerMha(options) {
  const worker = await import('./worker.js');
  return worker.createWorkerMha(options);
}

// One module per kind, loaded once: the single-thread core and the pthreads core.
const loadModule = loadOnce((/** @type {'threads' | 'single'} */ kind, /** @type {LoadOptions} */ options) =>
  (kind === 'threads' ? instantiateThreads() : instantiateSingle(options)));

/**
 * Load the WebAssembly core once; later calls return the same module.
 * @param {LoadOptions} [options]
 * @returns {Promise<MhaModule>}
 */
export function loadMha(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new MhaError('INVALID_ARGUMENT', `loadMha: expected an options object, got ${describe(options)}`);
  }
  const threads = options.threads ?? 'auto';
  if (threads !== 'auto' && threads !== true && threads !== false) {
    throw new MhaError('INVALID_ARGUMENT', `loadMha: threads must be 'auto', true or false, got ${describe(threads)}`);
  }
  if (threads === true && !threadsAvailable()) {
    return Promise.reject(new MhaError('INVALID_ARGUMENT',
      globalThis.crossOriginIsolated === true && onOtherOrigin(import.meta.url)
        ? `loadMha: threads: true needs the package's files on this page's origin (the pthreads core starts its worker threads from ${new URL('./wasm/threads/', import.meta.url).href}, another origin); threads: 'auto' loads the single-thread core here`
        : 'loadMha: threads: true needs SharedArrayBuffer and workers: Node.js, or a page served crossOriginIsolated ' +
          '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp); this one is not'));
  }
  // wasmBinary / wasmUrl name the single-thread module's bytes: 'auto' then keeps to it.
  const ownBinary = options.wasmBinary !== undefined || options.wasmUrl !== undefined;
  const kind = threads === true || (threads === 'auto' && !ownBinary && threadsAvailable()) ? 'threads' : 'single';
  return loadModule(kind, options).catch((error) => {
    // 'auto' falls back to the single-thread module when the threaded one cannot start.
    if (kind === 'threads' && threads === 'auto') return loadMha({ ...options, threads: false });
    throw error;
  });
}

/**
 * Whether the pthreads core can run here: in Node.js, and in pages (and their workers) that are
 * crossOriginIsolated, where SharedArrayBuffer exists, with these files on the page's origin
 * (the core starts its worker threads from the URL of its script, which a page cannot do for a
 * script elsewhere, e.g. on a CDN). Elsewhere loadMha() loads the single-thread core.
 */
export function threadsAvailable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof WebAssembly !== 'object') return false;
  if (isNode()) return true;
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function' && !onOtherOrigin(import.meta.url);
}

/** @param {LoadOptions} options @returns {Promise<MhaModule>} */
async function instantiateSingle(options) {
  const { default: createMhaCore } = await import('./wasm/mha_core.js');
  const core = await instantiateWasmModule(createMhaCore, new URL('./wasm/mha_core.wasm', import.meta.url), options);
  return createModule(core, 1);
}

// The pthreads core (web/lib/wasm/threads/): its worker threads load the classic script
// mha_core_threads.js; the page imports the same code as an ES module (.mjs), and Node.js
// requires the classic one. Its pool of worker threads starts with it.
/** @returns {Promise<MhaModule>} */
async function instantiateThreads() {
  const dir = new URL('./wasm/threads/', import.meta.url);
  /** @type {ThreadsCoreModule} */
  let core;
  if (isNode()) {
    const moduleName = 'node:module';
    const fsName = 'node:fs/promises';
    const [{ createRequire }, { readFile }] = await Promise.all([
      import(/* @vite-ignore */ moduleName), import(/* @vite-ignore */ fsName)]);
    const createMhaCore = createRequire(import.meta.url)('./wasm/threads/mha_core_threads.js');
    core = await createMhaCore({ wasmBinary: await readFile(new URL('mha_core_threads.wasm', dir)) });
    // Idle worker threads must not keep the process alive.
    for (const worker of [...core.PThread.unusedWorkers, ...core.PThread.runningWorkers]) worker.unref?.();
  } else {
    // Imported by URL, not bundled: this script also holds the core's Node.js code (require of
    // node: modules), which browser bundles cannot resolve. Bundlers that copy files named by
    // `new URL('…', import.meta.url)` (Vite, webpack) ship it; where it is missing, 'auto'
    // falls back to the single-thread core.
    const scriptUrl = new URL('./wasm/threads/mha_core_threads.mjs', import.meta.url).href;
    /** @type {{ default: (args: { locateFile: (name: string) => string, mainScriptUrlOrBlob: string }) => Promise<ThreadsCoreModule> }} */
    const { default: createMhaCore } = await import(/* @vite-ignore */ /* webpackIgnore: true */ scriptUrl);
    /** @type {Record<string, string>} */
    const files = {
      'mha_core_threads.wasm': new URL('./wasm/threads/mha_core_threads.wasm', import.meta.url).href,
      'mha_core_threads.worker.js': new URL('./wasm/threads/mha_core_threads.worker.js', import.meta.url).href,
    };
    core = await createMhaCore({
      locateFile: (name) => files[name] ?? new URL(name, dir).href,
      mainScriptUrlOrBlob: new URL('./wasm/threads/mha_core_threads.js', import.meta.url).href,
    });
  }
  return createModule(core, core.numThreads());
}

// ---------------------------------------------------------------------------------------------

/**
 * Symbol.dispose where the engine has it (`using` calls it), else a stand-in of the same name.
 * @type {typeof Symbol.dispose}
 */
const DISPOSE = Symbol.dispose ?? Symbol.for('Symbol.dispose');

/**
 * @param {CoreModule} core
 * @param {number} threads
 * @returns {MhaModule}
 */
function createModule(core, threads) {
  // Objects not disposed are freed when collected: a safety net, not the plan.
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((/** @type {Attention} */ handle) => handle.delete())
    : null;
  const { check } = statusCodes(core);
  const { MaskDtype } = core;
  // The heap, read after each call: memory may have grown during it.
  const heap = heapViews(core);
  // Shapes the JS keeps for later calls are handed out as copies.
  const read = (/** @type {import('./wasm-module.js').TensorRef} */ ref) => readTensor(heap, { data: ref.data, shape: ref.shape.slice() });

  /** @implements {Disposable} */
  class MultiHeadAttention {
    /** @type {Attention | null} */
    #handle;
    /** @type {Readonly<Required<AttentionConfig>>} */
    #config;
    /**
     * The calls the core was last prepared for: their description, its buffers, and the shapes
     * of the results (read after the first forward).
     * @type {{ call: ForwardCall, buffers: InputBuffers, shapes: OutputShapes | null } | null}
     */
    #prepared = null;

    /** @param {AttentionConfig} config */
    constructor(config) {
      if (config === null || typeof config !== 'object') {
        throw new MhaError('INVALID_CONFIG', `expected a config object { embedDim, numHeads, … }, got ${describe(config)}`);
      }
      const embedDim = positiveInteger('embedDim', config.embedDim);
      const numHeads = positiveInteger('numHeads', config.numHeads);
      const numKvHeads = positiveInteger('numKvHeads', config.numKvHeads, { optional: true });
      const kdim = positiveInteger('kdim', config.kdim, { optional: true });
      const vdim = positiveInteger('vdim', config.vdim, { optional: true });
      const seed = config.seed === undefined ? 0 : config.seed;
      if (!Number.isSafeInteger(seed) || seed < 0) {
        throw new MhaError('INVALID_CONFIG', `seed must be a non-negative integer, got ${describe(seed)}`);
      }
      const outDim = optionalInteger('outDim', config.outDim);
      const bias = flag('bias', config.bias, true);
      const addBiasKv = flag('addBiasKv', config.addBiasKv, false);
      const addZeroAttn = flag('addZeroAttn', config.addZeroAttn, false);
      const batchFirst = flag('batchFirst', config.batchFirst, false);
      const handle = new core.Attention();
      try {
        check(handle.init({ embedDim, numHeads, numKvHeads, kdim, vdim, outDim, bias, addBiasKv, addZeroAttn, batchFirst }, seed));
      } catch (error) {
        handle.delete();
        throw error;
      }
      this.#handle = handle;
      const resolved = handle.config();
      this.#config = Object.freeze({
        embedDim, numHeads, numKvHeads: resolved.numKvHeads, kdim: resolved.kdim, vdim: resolved.vdim, outDim: resolved.outDim,
        bias, addBiasKv, addZeroAttn, batchFirst, seed,
      });
      registry?.register(this, handle, this);
    }

    /** @returns {Attention} */
    #live() {
      if (!this.#handle) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
      return this.#handle;
    }

    get config() { return this.#config; }
    get headDim() { return this.#config.embedDim / this.#config.numHeads; }
    get disposed() { return this.#handle === null; }

    parameterNames() {
      return this.#live().parameterNames();
    }

    /** @param {string} name */
    parameterShape(name) {
      return check(this.#live().getParameter(String(name))).shape;
    }

    // One bulk copy of a parameter's values into the core's parameter buffer, sized for its
    // name and shape once the core has checked them.
    /** @param {unknown} name @param {TensorInput} tensor */
    #writeParameter(name, tensor) {
      const handle = this.#live();
      if (typeof name !== 'string') throw new MhaError('UNKNOWN_PARAMETER', `parameter name must be a string, got ${describe(name)}`);
      const t = tensorArg(`parameter '${name}'`, tensor);
      const buffer = check(handle.parameterBuffer(name, t.shape));
      heap().f32.set(t.data, buffer.data >> 2);
      return t;
    }

    /** @param {string} name @param {TensorInput} tensor */
    setParameter(name, tensor) {
      const t = this.#writeParameter(name, tensor);
      check(this.#live().setParameter(name, t.shape));
    }

    /** @param {string} name @returns {Tensor} */
    getParameter(name) {
      return readTensor(heap, check(this.#live().getParameter(String(name))));
    }

    /** @param {Record<string, TensorInput>} stateDict @param {{ strict?: boolean }} [options] */
    loadStateDict(stateDict, { strict = true } = {}) {
      this.#live();
      if (stateDict === null || typeof stateDict !== 'object') {
        throw new MhaError('INVALID_ARGUMENT', `expected a state_dict object, got ${describe(stateDict)}`);
      }
      const names = this.parameterNames();
      const given = Object.keys(stateDict);
      if (strict) {
        const missing = names.filter((n) => !given.includes(n));
        const unexpected = given.filter((n) => !names.includes(n));
        if (missing.length || unexpected.length) {
          throw new MhaError('UNKNOWN_PARAMETER', `state_dict does not match this module: missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`);
        }
      }
      // The core checks every tensor before any is set, so a bad state_dict changes nothing.
      const known = given.filter((name) => names.includes(name));
      for (const name of known) {
        const t = this.#writeParameter(name, stateDict[name]);
        check(this.#live().checkParameter(name, t.shape));
      }
      for (const name of known) this.setParameter(name, stateDict[name]);
    }

    stateDict() {
      /** @type {Record<string, Tensor>} */
      const out = {};
      for (const name of this.parameterNames()) out[name] = this.getParameter(name);
      return out;
    }

    /** @param {number} [seed] */
    resetParameters(seed = 0) {
      const handle = this.#live();
      if (!Number.isSafeInteger(seed) || seed < 0) {
        throw new MhaError('INVALID_ARGUMENT', `seed must be a non-negative integer, got ${describe(seed)}`);
      }
      handle.resetParameters(seed);
    }

    /** Cap (bytes) on the buffers one forward call may allocate. @param {number} bytes */
    setMemoryCap(bytes) {
      const handle = this.#live();
      if (!Number.isSafeInteger(bytes) || bytes <= 0) {
        throw new MhaError('INVALID_ARGUMENT', `memory cap must be a positive integer number of bytes, got ${describe(bytes)}`);
      }
      handle.setMemoryCap(bytes);
      this.#prepared = null;  // the inputs are checked against the cap again
    }

    /** @param {ForwardInput} input @returns {ForwardResult} */
    forward(input) {
      const handle = this.#live();
      if (input === null || typeof input !== 'object') {
        throw new MhaError('INVALID_ARGUMENT', `forward: expected { query, key?, value?, … }, got ${describe(input)}`);
      }
      const keyInput = input.key ?? input.query;
      const valueInput = input.value ?? keyInput;
      const query = tensorArg('query', input.query);
      const key = keyInput === input.query ? query : tensorArg('key', keyInput);
      const value = valueInput === keyInput ? key : tensorArg('value', valueInput);
      const keyPaddingMask = maskArg('keyPaddingMask', input.keyPaddingMask);
      const attnMask = maskArg('attnMask', input.attnMask);
      /** @type {ForwardCall} */
      const call = {
        query: query.shape,
        key: key === query ? null : key.shape,
        value: value === key ? null : value.shape,
        keyIsQuery: key === query,
        valueIsKey: value === key,
        keyPaddingMask: keyPaddingMask ? keyPaddingMask.shape : null,
        keyPaddingMaskDtype: keyPaddingMask ? MaskDtype[keyPaddingMask.dtype] : MaskDtype.none,
        attnMask: attnMask ? attnMask.shape : null,
        attnMaskDtype: attnMask ? MaskDtype[attnMask.dtype] : MaskDtype.none,
        options: {
          needWeights: flag('needWeights', input.needWeights, true),
          averageAttnWeights: flag('averageAttnWeights', input.averageAttnWeights, true),
          isCausal: flag('isCausal', input.isCausal, false),
          returnHeadOutputs: flag('returnHeadOutputs', input.returnHeadOutputs, false),
          returnConcat: flag('returnConcat', input.returnConcat, false),
          skipOutProj: flag('skipOutProj', input.skipOutProj, false),
          fullyMaskedRowsZero: flag('fullyMaskedRowsZero', input.fullyMaskedRowsZero, false),
        },
        ablateHeads: ablateArg(input.ablateHeads, this.#config.numHeads),
      };
      // The core keeps the call's description and its buffers: a call like the one before
      // sends only its data.
      let prepared = this.#prepared;
      if (!prepared || !same(prepared.call, call)) {
        this.#prepared = null;
        const buffers = check(handle.prepare(call));
        prepared = this.#prepared = { call, buffers, shapes: null };
      }
      const { buffers } = prepared;
      // One bulk copy in per tensor; self-attention passes one buffer for all three.
      const { f32, u8 } = heap();
      f32.set(query.data, buffers.query >> 2);
      if (key !== query) f32.set(key.data, buffers.key >> 2);
      if (value !== key) f32.set(value.data, buffers.value >> 2);
      for (const [mask, offset] of /** @type {const} */ ([[keyPaddingMask, buffers.keyPaddingMask], [attnMask, buffers.attnMask]])) {
        if (mask?.dtype === 'bool') u8.set(mask.data, offset);
        else if (mask) f32.set(mask.data, offset >> 2);
      }
      const out = check(handle.forward());
      const shapes = (prepared.shapes ??= handle.outputShapes());
      const result = (/** @type {import('./wasm/mha_core.js').OutputName} */ name) => {
        const shape = shapes[name];
        return shape ? read({ data: out[name], shape }) : null;
      };
      // the output is always computed: its shape is never null
      const output = /** @type {Tensor} */ (result('output'));
      return { output, weights: result('weights'), headOutputs: result('headOutputs'), concat: result('concat') };
    }

    dispose() {
      if (!this.#handle) return;
      registry?.unregister(this);
      this.#handle.delete();
      this.#handle = null;
    }

    [DISPOSE]() {
      this.dispose();
    }
  }

  /** @type {import('./wasm/mha_core.js').Statistics | null} */
  let statistics = null;
  /** @type {string[] | null} the names of a head's statistics, in the core's order */
  let headFields = null;
  /** @type {string[] | null} and of a row's */
  let rowFields = null;
  function stats() {
    if (!statistics) statistics = new core.Statistics();
    return statistics;
  }
  // The maps in the statistics' buffers, one bulk copy each; the buffers are sized again only
  // for maps of other shapes than the last ones.
  /** @type {{ shapes: number[][], buffers: MapBuffers } | null} */
  let mapsPrepared = null;
  /** @param {...{ data: Float32Array, shape: number[] }} maps  one or two */
  function writeMaps(...maps) {
    const s = stats();
    const shapes = maps.map((m) => m.shape);
    if (!mapsPrepared || !same(mapsPrepared.shapes, shapes)) {
      mapsPrepared = null;
      const buffers = check(shapes.length === 1 ? s.prepareOne(shapes[0]) : s.prepareTwo(shapes[0], shapes[1]));
      mapsPrepared = { shapes, buffers };
    }
    const { buffers } = mapsPrepared;
    const { f32 } = heap();
    f32.set(maps[0].data, buffers.a >> 2);
    if (maps.length > 1) f32.set(maps[1].data, buffers.b >> 2);
    return s;
  }

  /** @param {TensorInput} weights @param {StatisticsOptions} [options] @returns {ReturnType<MhaModule['headStatistics']>} */
  function headStatistics(weights, options = {}) {
    const threshold = options.sparsityThreshold ?? 0.01;
    if (typeof threshold !== 'number') {
      throw new MhaError('INVALID_ARGUMENT', `sparsityThreshold must be a number from 0 to 1, got ${describe(threshold)}`);
    }
    const perRow = flag('perRow', options.perRow, false);
    headFields ??= core.headStatisticsFields();
    rowFields ??= core.rowStatisticsFields();
    const s = writeMaps(tensorArg('weights', weights));
    // The views of the result are read before any other call into the module.
    const result = check(s.headStatistics({ sparsityThreshold: threshold, perRow }));
    return {
      heads: /** @type {import('./index.js').HeadStatistics[]} */ (/** @type {unknown} */ (records(result.heads, headFields))),
      rows: result.rows ? /** @type {import('./index.js').RowStatistics} */ (/** @type {unknown} */ (columns(result.rows, rowFields, result.rowsShape ?? []))) : null,
    };
  }

  // Records of F = fields.length values each, as objects ([{ entropy, … }, …]) or as one typed
  // array per field ({ entropy: Float64Array, …, argmax: Int32Array, shape }).
  /** @param {Float64Array} flat @param {string[]} fields @returns {Record<string, number>[]} */
  function records(flat, fields) {
    const F = fields.length;
    const out = new Array(flat.length / F);
    for (let r = 0; r < out.length; ++r) {
      /** @type {Record<string, number>} */
      const entry = {};
      for (let i = 0; i < F; ++i) entry[fields[i]] = flat[r * F + i];
      out[r] = entry;
    }
    return out;
  }
  /** @param {Float64Array} flat @param {string[]} fields @param {number[]} shape */
  function columns(flat, fields, shape) {
    const F = fields.length, count = flat.length / F;
    /** @type {Record<string, Float64Array | Int32Array | number[]>} */
    const out = { shape };
    for (let i = 0; i < F; ++i) {
      const column = fields[i] === 'argmax' ? new Int32Array(count) : new Float64Array(count);
      for (let r = 0; r < count; ++r) column[r] = flat[r * F + i];
      out[fields[i]] = column;
    }
    return out;
  }

  /** @param {TensorInput} weights */
  function headSimilarity(weights) {
    const s = writeMaps(tensorArg('weights', weights));
    const result = check(s.headSimilarity());
    return { jsd: result.matrix.slice(), numHeads: result.numHeads };
  }

  /** @param {TensorInput} a @param {TensorInput} b */
  function jsDivergence(a, b) {
    const s = writeMaps(tensorArg('a', a), tensorArg('b', b));
    const result = check(s.jsDivergence());
    return { perRow: result.matrix.slice(), mean: result.mean };
  }

  return Object.freeze({
    MultiHeadAttention,
    MhaError,
    headStatistics,
    headSimilarity,
    jsDivergence,
    heapBytes: () => core.heapBytes(),
    heapInUse: () => core.heapInUse(),
    liveObjects: () => core.liveObjects(),
    threads,
  });
}
