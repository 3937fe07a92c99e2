// The JavaScript API over the WebAssembly core: shapes, defaults, errors and ownership.
// Types and documentation: index.d.ts beside this file.
import { MhaError, codeName } from './errors.js';
import { instantiateWasmModule, isNode } from './wasm-module.js';

export { MhaError };
export { loadStateDictFile, parseSafetensors, toSafetensors } from './safetensors.js';

/**
 * Start a Web Worker with the core: the same API, every call returning a promise (worker.js).
 * Loaded on first use, so pages that compute on the main thread never download it.
 * @param {import('./index.js').WorkerOptions} [options]
 */
export async function createWorkerMha(options) {
  const worker = await import('./worker.js');
  return worker.createWorkerMha(options);
}

// Slots of the core's input buffers and results (cpp/bindings/bindings.cpp).
const SLOT = { query: 0, key: 1, value: 2, keyPaddingMask: 3, attnMask: 4, parameter: 5 };
const RESULT = { output: 0, weights: 1, headOutputs: 2, concat: 3, parameter: 4 };
const SHAPE_STRIDE = 5;
const MAX_DIMS = SHAPE_STRIDE - 1;
const FLAG = {
  needWeights: 1,
  averageAttnWeights: 2,
  isCausal: 4,
  returnHeadOutputs: 8,
  returnConcat: 16,
  skipOutProj: 32,
  fullyMaskedRowsZero: 64,
};
const MASK_DTYPE = { none: 0, bool: 1, float32: 2 };

// One module per kind, loaded once: the single-thread core and the pthreads core.
const modulePromises = new Map();

/**
 * Load the WebAssembly core once; later calls return the same module.
 * @param {import('./index.js').LoadOptions} [options]
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
      'loadMha: threads: true needs SharedArrayBuffer and workers: Node.js, or a page served crossOriginIsolated ' +
      '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp); this one is not'));
  }
  // wasmBinary / wasmUrl name the single-thread module's bytes: 'auto' then keeps to it.
  const ownBinary = options.wasmBinary !== undefined || options.wasmUrl !== undefined;
  const kind = threads === true || (threads === 'auto' && !ownBinary && threadsAvailable()) ? 'threads' : 'single';
  let promise = modulePromises.get(kind);
  if (!promise) {
    promise = (kind === 'threads' ? instantiateThreads() : instantiateSingle(options)).catch((error) => {
      modulePromises.delete(kind);
      // 'auto' falls back to the single-thread module when the threaded one cannot start.
      if (kind === 'threads' && threads === 'auto') return loadMha({ ...options, threads: false });
      throw error;
    });
    modulePromises.set(kind, promise);
  }
  return promise;
}

/**
 * Whether the pthreads core can run here: in Node.js, and in pages (and their workers) that are
 * crossOriginIsolated, where SharedArrayBuffer exists. Elsewhere loadMha() loads the
 * single-thread core.
 */
export function threadsAvailable() {
  if (typeof SharedArrayBuffer !== 'function' || typeof WebAssembly !== 'object') return false;
  if (isNode()) return true;
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function';
}

async function instantiateSingle(options) {
  const { default: createMhaCore } = await import('./wasm/mha_core.js');
  const core = await instantiateWasmModule(createMhaCore, new URL('./wasm/mha_core.wasm', import.meta.url), options);
  return createModule(core, 1);
}

// The pthreads core (web/lib/wasm/threads/): its worker threads load the classic script
// mha_core_threads.js; the page imports the same code as an ES module (.mjs), and Node.js
// requires the classic one. Its pool of worker threads starts with it.
async function instantiateThreads() {
  const dir = new URL('./wasm/threads/', import.meta.url);
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
    const { default: createMhaCore } = await import(/* @vite-ignore */ /* webpackIgnore: true */ scriptUrl);
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
// Argument checks (the core checks again; these give JS-shaped messages first)

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function checkShape(what, shape) {
  if (!Array.isArray(shape) && !ArrayBuffer.isView(shape)) {
    throw new MhaError('SHAPE_MISMATCH', `${what}: expected shape to be an array of dimensions, got ${describe(shape)}`);
  }
  if (shape.length > MAX_DIMS) {
    throw new MhaError('SHAPE_MISMATCH', `${what}: expected at most ${MAX_DIMS} dimensions, got shape [${Array.from(shape).join(', ')}]`);
  }
  let numel = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0 || d > 0x7fffffff) {
      throw new MhaError('SHAPE_MISMATCH', `${what}: every dimension must be a non-negative integer, got shape [${Array.from(shape).join(', ')}]`);
    }
    numel *= d;
  }
  return numel;
}

function tensorArg(what, tensor) {
  if (tensor === null || typeof tensor !== 'object' || !('data' in tensor) || !('shape' in tensor)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a tensor { data, shape }, got ${describe(tensor)}`);
  }
  if (tensor.dtype !== undefined && tensor.dtype !== 'float32') {
    throw new MhaError('INVALID_DTYPE', `${what}: expected dtype 'float32', got '${tensor.dtype}'`);
  }
  const numel = checkShape(what, tensor.shape);
  let { data } = tensor;
  if (!(data instanceof Float32Array)) {
    if (data === null || typeof data !== 'object' || typeof data.length !== 'number') {
      throw new MhaError('INVALID_DTYPE', `${what}: expected data to be a Float32Array or an array of numbers, got ${describe(data)}`);
    }
    data = Float32Array.from(data);
  }
  if (data.length !== numel) {
    throw new MhaError('LENGTH_MISMATCH', `${what}: data has ${data.length} values but shape [${Array.from(tensor.shape).join(', ')}] needs ${numel}`);
  }
  return { data, shape: Array.from(tensor.shape) };
}

function maskArg(what, mask) {
  if (mask === null || mask === undefined) return null;
  if (typeof mask !== 'object' || !('data' in mask) || !('shape' in mask)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a mask { data, shape, dtype }, got ${describe(mask)}`);
  }
  const numel = checkShape(what, mask.shape);
  const { data } = mask;
  if (data === null || typeof data !== 'object' || typeof data.length !== 'number') {
    throw new MhaError('INVALID_DTYPE', `${what}: expected data to be a Uint8Array, Float32Array or array, got ${describe(data)}`);
  }
  let dtype = mask.dtype;
  if (dtype === undefined) {
    dtype = data instanceof Uint8Array || (data.length > 0 && typeof data[0] === 'boolean') ? 'bool' : 'float32';
  }
  if (dtype !== 'bool' && dtype !== 'float32') {
    throw new MhaError('INVALID_DTYPE', `${what}: only bool and float32 masks are supported, got dtype '${dtype}'`);
  }
  if (data.length !== numel) {
    throw new MhaError('LENGTH_MISMATCH', `${what}: data has ${data.length} values but shape [${Array.from(mask.shape).join(', ')}] needs ${numel}`);
  }
  let values;
  if (dtype === 'bool') {
    values = new Uint8Array(numel);
    for (let i = 0; i < numel; ++i) values[i] = data[i] ? 1 : 0;
  } else {
    values = data instanceof Float32Array ? data : Float32Array.from(data);
  }
  return { dtype, data: values, shape: Array.from(mask.shape) };
}

function positiveInteger(what, value, { optional = false } = {}) {
  if (value === undefined && optional) return 0;
  if (!Number.isInteger(value) || value <= 0 || value > 0x7fffffff) {
    throw new MhaError('INVALID_CONFIG', `${what} must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

function flag(what, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new MhaError('INVALID_ARGUMENT', `${what} must be true or false, got ${describe(value)}`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------

function createModule(core, threads) {
  // Objects not disposed are freed when collected: a safety net, not the plan.
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => handle.delete())
    : null;

  function writeShape(handle, slot, shape) {
    const shapes = handle.shapes();  // a fresh view: memory may have grown since the last call
    shapes[slot * SHAPE_STRIDE] = shape.length;
    for (let i = 0; i < shape.length; ++i) shapes[slot * SHAPE_STRIDE + 1 + i] = shape[i];
  }

  // The core refuses (null) an input that would take its input buffers past the memory cap,
  // before allocating it: in WebAssembly the copy alone could exhaust the memory.
  function inputView(handle, slot, length, bytesPerValue) {
    const view = bytesPerValue === 1 ? handle.inputBytes(slot, length) : handle.input(slot, length);
    if (view === null || view === undefined) {
      const name = Object.keys(SLOT).find((k) => SLOT[k] === slot);
      throw new MhaError('TOO_LARGE', `${name}: ${length} values (${length * bytesPerValue} bytes) would take the inputs past the memory cap of ${handle.memoryCap()} bytes`);
    }
    return view;
  }

  function writeFloats(handle, slot, data) {
    inputView(handle, slot, data.length, 4).set(data);
  }

  function readResult(handle, which) {
    const view = handle.result(which);
    if (view === null || view === undefined) return null;
    const data = view.slice();
    const shape = handle.resultShape(which).split(',').filter((s) => s !== '').map(Number);
    return { data, shape };
  }

  function check(handle, status) {
    if (status !== 0) throw new MhaError(codeName(status), handle.error());
  }

  class MultiHeadAttention {
    #handle;
    #config;

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
      const bias = flag('bias', config.bias, true);
      const addBiasKv = flag('addBiasKv', config.addBiasKv, false);
      const addZeroAttn = flag('addZeroAttn', config.addZeroAttn, false);
      const batchFirst = flag('batchFirst', config.batchFirst, false);
      const handle = new core.Attention();
      const status = handle.init(embedDim, numHeads, numKvHeads, kdim, vdim, bias, addBiasKv, addZeroAttn, batchFirst, seed);
      if (status !== 0) {
        const message = handle.error();
        handle.delete();
        throw new MhaError(codeName(status), message);
      }
      this.#handle = handle;
      this.#config = Object.freeze({
        embedDim, numHeads, numKvHeads: handle.numKvHeads(), kdim: handle.kdim(), vdim: handle.vdim(),
        bias, addBiasKv, addZeroAttn, batchFirst, seed,
      });
      registry?.register(this, handle, this);
    }

    #live() {
      if (!this.#handle) throw new MhaError('DISPOSED', 'this MultiHeadAttention has been disposed');
      return this.#handle;
    }

    get config() { return this.#config; }
    get headDim() { return this.#config.embedDim / this.#config.numHeads; }
    get disposed() { return this.#handle === null; }

    parameterNames() {
      return this.#live().parameterNames().split(',');
    }

    parameterShape(name) {
      const handle = this.#live();
      check(handle, handle.getParameter(String(name)));
      return handle.resultShape(RESULT.parameter).split(',').map(Number);
    }

    setParameter(name, tensor) {
      const handle = this.#live();
      if (typeof name !== 'string') throw new MhaError('UNKNOWN_PARAMETER', `parameter name must be a string, got ${describe(name)}`);
      const t = tensorArg(`parameter '${name}'`, tensor);
      writeShape(handle, SLOT.parameter, t.shape);
      writeFloats(handle, SLOT.parameter, t.data);
      check(handle, handle.setParameter(name));
    }

    getParameter(name) {
      const handle = this.#live();
      check(handle, handle.getParameter(String(name)));
      return readResult(handle, RESULT.parameter);
    }

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
      // Check every tensor before setting any, so a bad state_dict changes nothing.
      const checked = [];
      for (const name of given) {
        if (!names.includes(name)) continue;
        const t = tensorArg(`parameter '${name}'`, stateDict[name]);
        const expected = this.parameterShape(name);
        const flatBias = (name === 'bias_k' || name === 'bias_v') && t.shape.length === 1 && t.shape[0] === expected[2];
        if (!flatBias && (t.shape.length !== expected.length || t.shape.some((d, i) => d !== expected[i]))) {
          throw new MhaError('SHAPE_MISMATCH', `parameter '${name}': expected shape [${expected.join(', ')}], got [${t.shape.join(', ')}]`);
        }
        for (let i = 0; i < t.data.length; ++i) {
          if (!Number.isFinite(t.data[i])) {
            throw new MhaError('INVALID_ARGUMENT', `parameter '${name}': value ${i} is not finite (${t.data[i]})`);
          }
        }
        checked.push([name, t]);
      }
      for (const [name, t] of checked) this.setParameter(name, t);
    }

    stateDict() {
      const out = {};
      for (const name of this.parameterNames()) out[name] = this.getParameter(name);
      return out;
    }

    resetParameters(seed = 0) {
      const handle = this.#live();
      if (!Number.isSafeInteger(seed) || seed < 0) {
        throw new MhaError('INVALID_ARGUMENT', `seed must be a non-negative integer, got ${describe(seed)}`);
      }
      handle.resetParameters(seed);
    }

    /** Cap (bytes) on the buffers one forward call may allocate. */
    setMemoryCap(bytes) {
      const handle = this.#live();
      if (!Number.isSafeInteger(bytes) || bytes <= 0) {
        throw new MhaError('INVALID_ARGUMENT', `memory cap must be a positive integer number of bytes, got ${describe(bytes)}`);
      }
      handle.setMemoryCap(bytes);
    }

    forward(input) {
      const handle = this.#live();
      if (input === null || typeof input !== 'object') {
        throw new MhaError('INVALID_ARGUMENT', `forward: expected { query, key?, value?, … }, got ${describe(input)}`);
      }
      const keyInput = input.key ?? input.query;
      const valueInput = input.value ?? keyInput;
      const query = tensorArg('query', input.query);
      const key = keyInput === input.query ? query : tensorArg('key', keyInput);
      const value = valueInput === input.query ? query : valueInput === keyInput ? key : tensorArg('value', valueInput);
      const keyPaddingMask = maskArg('keyPaddingMask', input.keyPaddingMask);
      const attnMask = maskArg('attnMask', input.attnMask);
      let flags = 0;
      if (flag('needWeights', input.needWeights, true)) flags |= FLAG.needWeights;
      if (flag('averageAttnWeights', input.averageAttnWeights, true)) flags |= FLAG.averageAttnWeights;
      if (flag('isCausal', input.isCausal, false)) flags |= FLAG.isCausal;
      if (flag('returnHeadOutputs', input.returnHeadOutputs, false)) flags |= FLAG.returnHeadOutputs;
      if (flag('returnConcat', input.returnConcat, false)) flags |= FLAG.returnConcat;
      if (flag('skipOutProj', input.skipOutProj, false)) flags |= FLAG.skipOutProj;
      if (flag('fullyMaskedRowsZero', input.fullyMaskedRowsZero, false)) flags |= FLAG.fullyMaskedRowsZero;
      const ablate = input.ablateHeads ?? [];
      if (!Array.isArray(ablate) && !ArrayBuffer.isView(ablate)) {
        throw new MhaError('INVALID_ARGUMENT', `ablateHeads: expected an array of head indices, got ${describe(ablate)}`);
      }
      for (const h of ablate) {
        if (!Number.isInteger(h) || h < 0 || h >= this.#config.numHeads) {
          throw new MhaError('INVALID_ARGUMENT', `ablateHeads: head index ${String(h)} is out of range; expected an integer from 0 to ${this.#config.numHeads - 1}`);
        }
      }

      // One bulk copy in per tensor; self-attention passes one buffer for all three.
      writeShape(handle, SLOT.query, query.shape);
      writeFloats(handle, SLOT.query, query.data);
      let keySource = SLOT.query;
      if (key !== query) {
        writeShape(handle, SLOT.key, key.shape);
        writeFloats(handle, SLOT.key, key.data);
        keySource = SLOT.key;
      }
      const valueSource = value === query ? SLOT.query : value === key ? keySource : SLOT.value;
      if (valueSource === SLOT.value) {
        writeShape(handle, SLOT.value, value.shape);
        writeFloats(handle, SLOT.value, value.data);
      }
      const writeMask = (slot, mask) => {
        if (!mask) return MASK_DTYPE.none;
        writeShape(handle, slot, mask.shape);
        if (mask.dtype === 'bool') inputView(handle, slot, mask.data.length, 1).set(mask.data);
        else writeFloats(handle, slot, mask.data);
        return MASK_DTYPE[mask.dtype];
      };
      const kpmDtype = writeMask(SLOT.keyPaddingMask, keyPaddingMask);
      const maskDtype = writeMask(SLOT.attnMask, attnMask);
      if (ablate.length) writeFloats(handle, SLOT.parameter, Float32Array.from(ablate));
      check(handle, handle.forward(keySource, valueSource, kpmDtype, maskDtype, flags, ablate.length));

      // Ask the core only for what this call produced: each crossing costs time at lesson sizes.
      return {
        output: readResult(handle, RESULT.output),
        weights: flags & FLAG.needWeights ? readResult(handle, RESULT.weights) : null,
        headOutputs: flags & FLAG.returnHeadOutputs ? readResult(handle, RESULT.headOutputs) : null,
        concat: flags & FLAG.returnConcat ? readResult(handle, RESULT.concat) : null,
      };
    }

    dispose() {
      if (!this.#handle) return;
      registry?.unregister(this);
      this.#handle.delete();
      this.#handle = null;
    }

    [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() {
      this.dispose();
    }
  }

  let statistics = null;
  function stats() {
    if (!statistics) statistics = new core.Statistics();
    return statistics;
  }
  function writeStatsInput(which, what, tensor) {
    const t = tensorArg(what, tensor);
    const s = stats();
    const shapes = s.shapes();
    shapes[which * SHAPE_STRIDE] = t.shape.length;
    for (let i = 0; i < t.shape.length; ++i) shapes[which * SHAPE_STRIDE + 1 + i] = t.shape[i];
    const view = s.input(which, t.data.length);
    if (view === null || view === undefined) {
      throw new MhaError('TOO_LARGE', `${what}: ${t.data.length} values (${t.data.length * 4} bytes) would take the statistics' inputs past the memory cap of ${s.memoryCap()} bytes`);
    }
    view.set(t.data);
    return t;
  }

  const HEAD_FIELDS = ['entropy', 'normalizedEntropy', 'sparsity', 'maxAttention', 'peakAttention',
    'averageAttention', 'meanDistance', 'previousTokenShare', 'firstTokenShare', 'diagonalShare', 'rows'];

  function headStatistics(weights, options = {}) {
    const threshold = options.sparsityThreshold ?? 0.01;
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
      throw new MhaError('INVALID_ARGUMENT', `sparsityThreshold must be a number from 0 to 1, got ${describe(threshold)}`);
    }
    const perRow = flag('perRow', options.perRow, false);
    const t = writeStatsInput(0, 'weights', weights);
    const s = stats();
    const status = s.headStatistics(threshold, perRow);
    if (status !== 0) throw new MhaError(codeName(status), s.error());
    const flat = s.heads().slice();
    const heads = [];
    for (let h = 0; h < flat.length / HEAD_FIELDS.length; ++h) {
      const entry = {};
      HEAD_FIELDS.forEach((field, i) => { entry[field] = flat[h * HEAD_FIELDS.length + i]; });
      heads.push(entry);
    }
    let rows = null;
    if (perRow) {
      const r = s.rows().slice();
      const count = r.length / 6;
      rows = {
        entropy: new Float64Array(count), normalizedEntropy: new Float64Array(count),
        maxAttention: new Float64Array(count), argmax: new Int32Array(count),
        sparsity: new Float64Array(count), meanDistance: new Float64Array(count),
        shape: t.shape.length === 4 ? [t.shape[0], t.shape[1], t.shape[2]] : [1, t.shape[0], t.shape[1]],
      };
      for (let i = 0; i < count; ++i) {
        rows.entropy[i] = r[i * 6];
        rows.normalizedEntropy[i] = r[i * 6 + 1];
        rows.maxAttention[i] = r[i * 6 + 2];
        rows.argmax[i] = r[i * 6 + 3];
        rows.sparsity[i] = r[i * 6 + 4];
        rows.meanDistance[i] = r[i * 6 + 5];
      }
    }
    return { heads, rows };
  }

  function headSimilarity(weights) {
    const t = writeStatsInput(0, 'weights', weights);
    const s = stats();
    const status = s.headSimilarity();
    if (status !== 0) throw new MhaError(codeName(status), s.error());
    return { jsd: s.matrix().slice(), numHeads: t.shape[t.shape.length - 3] };
  }

  function jsDivergence(a, b) {
    writeStatsInput(0, 'a', a);
    writeStatsInput(1, 'b', b);
    const s = stats();
    const status = s.jsDivergence();
    if (status !== 0) throw new MhaError(codeName(status), s.error());
    return { perRow: s.matrix().slice(), mean: s.mean() };
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
