// Type test of the package's additions: weights from files, the worker API, <mha-explorer>.
// Compiled with `tsc --noEmit` (npm test: type test); lines marked @ts-expect-error must fail.
import {
  loadMha, loadStateDictFile, parseSafetensors, toSafetensors, createWorkerMha, MhaError,
  type StateDictFile, type WorkerMhaModule, type MhaErrorCode,
} from '../../web/lib/index.js';
import { createWorkerMha as createFromSubpath } from '../../web/lib/worker.js';
import { ATTENTION_PARAMETER_NAMES } from '../../web/lib/safetensors.js';
import type { MhaExplorerElement, ComputedDetail, HeadSelectedDetail } from '../../web/element/mha-explorer.js';

async function weightsFromFiles(bytes: Uint8Array, text: string) {
  const mha = await loadMha();
  const file: StateDictFile = loadStateDictFile(bytes, { fileName: 'w.safetensors', prefix: 'layers.0.self_attn.', numHeads: 8 });
  const format: 'safetensors' | 'json' = file.format;
  const attn = new mha.MultiHeadAttention(file.config);
  attn.loadStateDict(file.stateDict);
  loadStateDictFile(text);
  loadStateDictFile({ config: { num_heads: 2 }, state_dict: {} });
  const { tensors, metadata } = parseSafetensors(bytes.buffer as ArrayBuffer);
  const dtype: string = tensors['in_proj_weight'].dtype;
  const meta: string | undefined = metadata['config'];
  const written: Uint8Array = toSafetensors(attn.stateDict(), { source: 'test' });
  // @ts-expect-error numHeads is a number
  loadStateDictFile(bytes, { numHeads: '8' });
  const names: readonly string[] = ATTENTION_PARAMETER_NAMES;
  return [format, dtype, meta, written, names];
}

async function inAWorker(x: Float32Array) {
  const mha: WorkerMhaModule = await createWorkerMha({ workerUrl: '/lib/worker.js', wasmUrl: new URL('https://example.org/mha_core.wasm') });
  const attn = new mha.MultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true });
  const config = await attn.ready;
  const E: number = config.embedDim;
  const { output, weights } = await attn.forward({ query: { data: x, shape: [1, x.length / E, E] } });
  const shape: number[] = output.shape;
  const stats = await mha.headStatistics(weights!);
  const entropy: number = stats.heads[0].entropy;
  const unsubscribe: () => void = mha.onPendingChange((n: number) => void n);
  unsubscribe();
  // @ts-expect-error forward returns a promise in the worker API
  const sync: number[] = attn.forward({ query: { data: x, shape: [1, 1, 64] } }).output.shape;
  await attn.dispose();
  mha.terminate();
  await createFromSubpath();
  const code: MhaErrorCode = 'WORKER_ERROR';
  return [shape, entropy, sync, code, new MhaError('INVALID_ARGUMENT', 'x') instanceof Error];
}

function element() {
  const explorer = document.createElement('mha-explorer');
  const typed: MhaExplorerElement = explorer;
  typed.view = 'grid';
  typed.selectedHead = 3;
  // @ts-expect-error no such view
  typed.view = 'table';
  explorer.addEventListener('computed', (event) => {
    const detail: ComputedDetail = event.detail;
    const [H, L]: number[] = detail.weights.shape;
    return H * L * detail.statistics.length;
  });
  explorer.addEventListener('head-selected', (event) => {
    const detail: HeadSelectedDetail = event.detail;
    return detail.head - detail.index;
  });
  explorer.addEventListener('mha-computed', (event) => event.detail.source === 'pretrained');
  explorer.addEventListener('mha-error', (event) => event.detail.message.length);
  const status: 'loading' | 'computing' | 'ready' | 'error' = typed.status;
  return status;
}

export { weightsFromFiles, inAWorker, element };
