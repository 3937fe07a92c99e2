// Type test of the Hugging Face checkpoints' API (web/lib/models.d.ts), compiled with
// `tsc --noEmit -p tsconfig.json` and never run. Imported by the package's own name, so the
// "./models" entry of package.json's exports is checked too. Lines marked @ts-expect-error
// must stay errors.
import { loadModel, MODEL_LIMITS, type Model, type ModelRunResult } from 'mha-explorer/models';

export async function nextToken(files: File[]): Promise<number> {
  const model: Model = await loadModel(files, { maxParameters: MODEL_LIMITS.maxParameters });
  const result: ModelRunResult = model.run('the king follows', { ablate: [[0, 1]] });
  const weights: Float32Array = result.layers[0].weights.data;
  const [[id, probability]] = model.top(result, 5);
  const family: 'gpt2' | 'bert' = model.config.family;
  // @ts-expect-error ablation pairs are [layer, head]
  model.run('x', { ablate: [0, 1] });
  model.dispose();
  return weights.length + id + probability + family.length;
}

export async function fromBytes(config: string, weights: Uint8Array): Promise<string | null> {
  const model = await loadModel({ 'config.json': config, 'model.safetensors': weights });
  return model.tokenizer;
}
