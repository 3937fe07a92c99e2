// A Web Worker for Node.js tests, on worker_threads: enough of the browser's Worker for rpc.js
// (postMessage with transfers, message / error / messageerror events, terminate). The thread
// runs fixtures/web-worker-boot.js, which gives its global scope the worker's postMessage and
// addEventListener('message') and imports the module script.
import { Worker as ThreadWorker } from 'node:worker_threads';

const BOOT = new URL('./fixtures/web-worker-boot.js', import.meta.url);

export class NodeWebWorker extends EventTarget {
  #thread;

  /** @param {string | URL} url  a module script (file: URL) */
  constructor(url) {
    super();
    this.#thread = new ThreadWorker(BOOT, { workerData: { url: String(url) } });
    this.#thread.on('message', (data) => this.dispatchEvent(new MessageEvent('message', { data })));
    this.#thread.on('messageerror', () => this.dispatchEvent(new Event('messageerror')));
    this.#thread.on('error', (error) => this.dispatchEvent(Object.assign(new Event('error'), { message: error.message })));
  }

  postMessage(message, transfer = []) {
    this.#thread.postMessage(message, transfer);
  }

  terminate() {
    this.#thread.terminate();
  }
}

/** Runs `body` with globalThis.Worker set to NodeWebWorker, then puts the old one back. */
export async function withNodeWorkers(body) {
  const before = globalThis.Worker;
  globalThis.Worker = NodeWebWorker;
  try {
    return await body();
  } finally {
    globalThis.Worker = before;
  }
}
