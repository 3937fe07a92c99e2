// Type test of the pretrained encoder's API (web/lib/encoder.d.ts), compiled with
// `tsc --noEmit -p tsconfig.json` and never run. Imported by the package's own name, so the
// "./encoder" entry of package.json's exports is checked too. Lines marked @ts-expect-error
// must stay errors.
import {
  ATTENTION_PARAMETERS,
  createWorkerEncoder,
  DEFAULT_MODEL_URL,
  loadEncoder,
  type AttentionParameterName,
  type EncodeResult,
  type Encoder,
  type EncoderConfig,
  type EncoderLayerResult,
  type Tokens,
  type WorkerEncoder,
} from 'mha-explorer/encoder';
import { MhaError, type MhaErrorCode, type Tensor } from 'mha-explorer';

export async function encodeASentence(): Promise<number> {
  using encoder: Encoder = await loadEncoder({
    dtype: 'float16',
    modelUrl: new URL('/models/use-lite/', 'https://example.org'),
    onProgress: ({ file, loaded, total }) => console.log(file, loaded / total),
    cache: false,
  });
  const config: EncoderConfig = encoder.config;
  const heads: number = config.layers[0]!.numHeads;
  const tokens: Tokens = encoder.tokenize('The cat sat on the mat.', { truncate: true });
  const firstWord: number | undefined = tokens.words[0];
  const result: EncodeResult = encoder.encode('The cat sat on the mat.', { ablate: [[0, 1], [1, 3]] });
  const layer: EncoderLayerResult = result.layers[1]!;
  const weights: Tensor = layer.weights;
  const [H, T] = weights.shape;
  const embedding: Float32Array = result.embedding;
  const fromIds = encoder.encode({ ids: new Int32Array(tokens.ids) });
  const wO: Tensor = encoder.parameter(0, 'out_proj.weight');
  const names: readonly AttentionParameterName[] = ATTENTION_PARAMETERS;
  const where: string = DEFAULT_MODEL_URL;
  const cut: boolean = result.truncated;
  void [firstWord, names, where, cut, fromIds];

  // @ts-expect-error dtype is float32 or float16
  await loadEncoder({ dtype: 'int8' });
  // @ts-expect-error a parameter name of nn.MultiheadAttention, not of the FFN
  encoder.parameter(0, 'linear1.weight');
  // @ts-expect-error ablate takes [layer, head] pairs
  encoder.encode('x', { ablate: [1, 2] });
  // @ts-expect-error text or { ids }
  encoder.encode(42);

  return heads + (H ?? 0) + (T ?? 0) + embedding.length + wO.shape.length;
}

export async function inAWorker(): Promise<void> {
  const worker: WorkerEncoder = await createWorkerEncoder({ dtype: 'float16', workerUrl: '/lib/encoder-worker-entry.js' });
  const result: EncodeResult = await worker.encode('Hello.');
  const tokens: Tokens = await worker.tokenize('Hello.');
  const bias: Tensor = await worker.parameter(1, 'in_proj_bias');
  // @ts-expect-error results are promises in the worker
  const direct: EncodeResult = worker.encode('Hello.');
  void [result, tokens, bias, direct];
  worker.dispose();
}

export function errors(error: unknown): string | null {
  if (error instanceof MhaError) {
    const code: MhaErrorCode = error.code;
    return code === 'MODEL_FILE' || code === 'TOO_LARGE' ? error.message : code;
  }
  return null;
}
