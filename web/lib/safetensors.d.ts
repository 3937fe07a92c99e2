// Types of web/lib/safetensors.js (the package's "mha-explorer/safetensors" entry).
export { loadStateDictFile, parseSafetensors, toSafetensors } from './index.js';
export type { FileTensor, StateDictFile, StateDictFileOptions } from './index.js';

/** Parameter names of torch.nn.MultiheadAttention. */
export declare const ATTENTION_PARAMETER_NAMES: readonly string[];
