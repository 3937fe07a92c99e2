// Type test of the Hugging Face checkpoints' API (web/lib/models.d.ts), compiled with
// `tsc --noEmit -p tsconfig.json` and never run. Imported by the package's own name, so the
// "./models" entry of package.json's exports is checked too. Lines marked @ts-expect-error
// must stay errors.
import {
  loadModel, loadWorkerModel, MODEL_LIMITS, scoreText,
  type HeadImportance, type Model, type ModelConfig, type ModelMemory, type ModelProgress, type ModelRunResult, type TokenizerInfo,
  type TokenReading, type WorkerModel, type ModelExtendResult, type GenerateResult,
} from 'mha-explorer/models';

export async function nextToken(files: File[]): Promise<number> {
  const model: Model = await loadModel(files, { maxMemoryBytes: MODEL_LIMITS.maxMemoryBytes });
  const result: ModelRunResult = model.run('the king follows', { ablate: [[0, 1]] });
  const weights: Float32Array = result.layers[0].weights.data;
  const [[id, probability]] = model.top(result, 5);
  const family: 'next-token' | 'masked' | 'none' = model.config.task;
  const { moduleBytes, weightBytes }: ModelMemory = model.memory();
  const causal: boolean = model.config.causal;
  // @ts-expect-error ablation pairs are [layer, head]
  model.run('x', { ablate: [0, 1] });
  model.dispose();
  return weights.length + id + probability + family.length + moduleBytes + weightBytes + Number(causal);
}

export async function fromBytes(config: string, weights: Uint8Array): Promise<string | null> {
  const model = await loadModel({ 'config.json': config, 'model.safetensors': weights });
  return model.tokenizer?.name ?? null;
}

export async function fromUrl(signal: AbortSignal): Promise<number> {
  const seen: ModelProgress[] = [];
  using model = await loadModel('models/gpt2-trained/', {
    signal,
    maxFileBytes: 2 ** 28,
    onProgress: ({ file, loaded, total }) => { seen.push({ file, loaded, total }); },
  });
  const again: Model = await loadModel(new URL('https://example.com/models/gpt2/config.json'));
  again.dispose();
  const ids: number[] = model.encode('the king');
  const pieces: string[] = model.tokens(ids);
  const reading: TokenReading = model.read(ids);
  const word: number = reading.words[0];
  const shown: string = reading.texts[0];
  const importance: HeadImportance = model.headImportance(ids);
  const [layers, heads]: [number, number] = importance.shape;
  // writing on: the new rows (H, R, S) and logits; n tokens, greedy or sampled
  const extended: ModelExtendResult = model.extend(ids, { from: 0 });
  const rows: Float32Array = extended.layers[0].weights.data;
  const cached: number = model.cachedLength();
  const written: GenerateResult = model.generate(20, { prompt: 'the king', temperature: 0.8, topK: 40, seed: 7 });
  const firstStep: number = written.steps[0].probability + written.steps[0].position + written.first;
  // @ts-expect-error the temperature is a number
  model.generate(5, { temperature: 'hot' });
  const disposed: boolean = model.disposed;
  // @ts-expect-error onProgress is given one object
  await loadModel('models/x/', { onProgress: (file: string, loaded: number) => file.length + loaded });
  // @ts-expect-error a signal is an AbortSignal
  await loadModel('models/x/', { signal: true });
  const total: number = seen[0]?.total ?? 0;
  return pieces.length + layers * heads + total + (disposed ? 1 : 0) + word + shown.length;
}

export async function inAWorker(files: FileList): Promise<Array<[number, number]>> {
  const model: WorkerModel = await loadWorkerModel(files, { workerUrl: '/assets/models-worker-entry.js', onProgress: (p) => p.loaded });
  const fromUrl: WorkerModel = await loadWorkerModel(new URL('./models/gpt2/', 'https://example.com/'), { wasmUrl: '/mha_models.wasm' });
  fromUrl.dispose();
  const ids: number[] = await model.encode('the king follows');
  const result: ModelRunResult = await model.run(ids, { ablate: [[0, 1]] });
  const weights: Float32Array = result.layers[0].weights.data;
  const importance: Float32Array = (await model.headImportance(ids)).data;
  const writtenIds: number[] = (await model.generate(3, { greedy: true })).ids;
  const newRows: number[] = (await model.extend([1, 2])).layers[0].weights.shape;
  const pieces: string[] = await model.tokens(ids);
  // @ts-expect-error the worker's methods return promises
  const direct: number[] = model.encode('x');
  const top = await model.top(result, 3);
  const config: Readonly<ModelConfig> = model.config;
  const tokenizer: Readonly<TokenizerInfo> | null = model.tokenizer;
  const kind: 'bpe' | 'wordpiece' | 'unigram' | undefined = tokenizer?.kind;
  const mask: number | null | undefined = tokenizer?.maskId;
  const marked: string[] = (await model.read(ids)).marked;
  // @ts-expect-error the tokenizer is described, not named by a string
  const named: string | null = model.tokenizer;
  model[Symbol.dispose]();
  void [weights, importance, pieces, direct, config, kind, mask, marked, named];
  return top;
}

export function textScores(result: ModelRunResult, ids: number[]): number {
  const { heads, cells } = scoreText(result.layers.map((l) => l.weights), ids);
  const induction: number = heads[0].induction;
  const layer: number = heads[0].layer;
  const repeats: number = cells.duplicateToken;
  // @ts-expect-error the scores are of the three detectors only
  heads[0].copying;
  return induction + layer + repeats;
}
