// Instantiating an Emscripten module in a browser, a worker or Node.js: the one place that knows
// how the .wasm bytes are found. Callers pass `new URL('./wasm/….wasm', import.meta.url)` written
// out in their own module, so that bundlers see and copy the file.

export function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
    typeof process.versions.node === 'string' && typeof window === 'undefined';
}

/**
 * @param {(args: object) => Promise<object>} factory  the MODULARIZE factory (createMhaCore, …)
 * @param {URL} wasmUrl  where the .wasm lies beside the calling module
 * @param {{wasmBinary?: ArrayBuffer | Uint8Array, wasmUrl?: string | URL}} [options]
 */
export async function instantiateWasmModule(factory, wasmUrl, options = {}) {
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
