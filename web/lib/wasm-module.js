// Instantiating an Emscripten module in a browser, a worker or Node.js, and reading its memory:
// the one place that knows how the .wasm bytes are found. Callers pass `new URL('./wasm/….wasm', import.meta.url)` written
// out in their own module, so that bundlers see and copy the file.

// The part of every Emscripten module the JS API reads (the modules' own declarations in
// wasm/*.d.ts build on these).
/** What every call into the core that can fail returns (cpp/bindings/boundary.h). @typedef {{ code: number, message: string }} Outcome */
/** A tensor in the module's memory: `data` is its byte offset in the heap. @typedef {{ data: number, shape: number[] }} TensorRef */
/** A call's tensor result. @typedef {Outcome & TensorRef} TensorOutcome */
/** An object made by embind: freed with delete(). @typedef {{ delete(): void }} EmbindObject */
/** What instantiateWasmModule hands the MODULARIZE factory. @typedef {{ wasmBinary?: ArrayBuffer | Uint8Array, locateFile?: (path: string) => string }} ModuleArgs */
/**
 * StatusCode: the core's status codes by name; wasmMemory: the pthreads core's shared memory
 * (the single-thread modules renew their HEAP views).
 * @typedef {{ StatusCode: Record<string, { value: number }>, HEAPF32: Float32Array, HEAPU8: Uint8Array, HEAP32: Int32Array,
 *             HEAPU32: Uint32Array, wasmMemory?: WebAssembly.Memory }} EmscriptenModule
 */
/**
 * @template {EmscriptenModule} M
 * @typedef {(args?: ModuleArgs) => Promise<M>} ModuleFactory
 */

export function isNode() {
  // the page's types have no Node.js: process is read as what it may be
  const { process } = /** @type {{ process?: { versions?: { node?: unknown } } }} */ (globalThis);
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    typeof process.versions.node === 'string' && typeof window === 'undefined';
}

/**
 * @template {EmscriptenModule} M
 * @param {ModuleFactory<M>} factory  the MODULARIZE factory (createMhaCore, …)
 * @param {URL} wasmUrl  where the .wasm lies beside the calling module
 * @param {{wasmBinary?: ArrayBuffer | Uint8Array, wasmUrl?: string | URL}} [options]
 * @returns {Promise<M>}
 */
export async function instantiateWasmModule(factory, wasmUrl, options = {}) {
  /** @type {ModuleArgs} */
  const moduleArgs = {};
  if (options.wasmBinary) {
    moduleArgs.wasmBinary = options.wasmBinary;
  } else if (isNode()) {
    // Node's fetch cannot read a file path: hand the bytes over instead.
    const fsName = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ fsName);
    moduleArgs.wasmBinary = await readFile(options.wasmUrl ? new URL(options.wasmUrl, wasmUrl) : wasmUrl);
  } else {
    const base = typeof location === 'object' ? location.href : undefined;
    const url = options.wasmUrl ? new URL(options.wasmUrl, base).href : wasmUrl.href;
    moduleArgs.locateFile = () => url;
  }
  return factory(moduleArgs);
}

/**
 * The module's memory as typed arrays, made again when the memory has grown (a view of the old
 * buffer is empty then). The pthreads core shares a WebAssembly.Memory (module.wasmMemory)
 * whose buffer a worker thread may have replaced; the single-thread modules renew their own
 * HEAP views.
 * @param {EmscriptenModule} module
 * @returns {() => HeapViews}
 */
export function heapViews(module) {
  const memory = module.wasmMemory;
  /** @type {HeapViews | null} */
  let views = null;
  return () => {
    if (!memory) return { f32: module.HEAPF32, u8: module.HEAPU8, i32: module.HEAP32, u32: module.HEAPU32 };
    if (!views || views.f32.buffer !== memory.buffer) {
      const { buffer } = memory;
      views = { f32: new Float32Array(buffer), u8: new Uint8Array(buffer), i32: new Int32Array(buffer), u32: new Uint32Array(buffer) };
    }
    return views;
  };
}

/** @typedef {{ f32: Float32Array, u8: Uint8Array, i32: Int32Array, u32: Uint32Array }} HeapViews */

/**
 * A tensor of the module ({ data: byte offset, shape }) copied out with one slice.
 * @param {() => HeapViews} heap
 * @param {TensorRef} tensor
 * @returns {import('./index.js').Tensor}
 */
export function readTensor(heap, { data, shape }) {
  let numel = 1;
  for (let i = 0; i < shape.length; ++i) numel *= shape[i];
  const start = data / 4;  // a byte offset may pass 2^31 (a module of up to 4 GiB): no signed shift
  return { data: heap().f32.slice(start, start + numel), shape };
}
