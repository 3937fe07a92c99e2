// Types of web/lib/worker.js (the package's "mha-explorer/worker" entry).
export { createWorkerMha } from './index.js';
export type { WorkerOptions, WorkerMhaModule, WorkerMultiHeadAttention } from './index.js';
