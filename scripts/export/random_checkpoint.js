// A random checkpoint of a real model's shape in Hugging Face layout (config.json, model.safetensors,
// tokenizer.json), for measuring memory and time at real sizes without downloading a model or
// installing PyTorch. Node.js built-ins only; the weights are written tensor by tensor, so the
// script itself never holds the whole file.
//
//   node scripts/export/random_checkpoint.js gpt2-small F32 build/bench/random-gpt2-small-f32
//   node scripts/export/random_checkpoint.js gpt2-medium F16 build/bench/random-gpt2-medium-f16
//   node scripts/export/random_checkpoint.js smollm2-135m BF16 build/bench/random-smollm2-135m-bf16
//
// Shapes: gpt2-small (12 layers x 12 heads, width 768, 124M parameters), gpt2-medium (24 x 16,
// width 1024, 355M), gpt2-long-tiny (3 x 4, width 32, a vocabulary of 260, GPT-2's 1,024 positions), smollm2-135m (Llama layout: 30 layers, 9 query and 3 key/value heads, width
// 576, feed-forward 1536, vocabulary 49,152, 135M), qwen2.5-0.5b (Qwen2 layout: 24 layers, 14 and
// 2 heads, width 896, feed-forward 4864, vocabulary 151,936, q/k/v biases, 494M); dtypes F32,
// F16, BF16. Weights ~ N(0, 0.02) from a fixed seed (norm weights 1, biases 0), the LM head tied
// to the token embedding (not written, as save_pretrained leaves it out), as in all four models.
// The tokenizer is byte-level BPE with the model's vocabulary size and no merges: every byte of a
// text is one token (a text of 128 ASCII characters is 128 tokens); ids from 256 are filler.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const GPT2 = { vocab: 50257, positions: 1024 };
const SHAPES = {
  'gpt2-small': { ...GPT2, layout: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768 },
  'gpt2-medium': { ...GPT2, layout: 'gpt2', n_layer: 24, n_head: 16, n_embd: 1024 },
  // GPT-2's context in a model small enough to commit (tests/golden/models/gpt2-long)
  'gpt2-long-tiny': { vocab: 260, positions: 1024, layout: 'gpt2', n_layer: 3, n_head: 4, n_embd: 32 },
  'smollm2-135m': {
    layout: 'llama', model_type: 'llama', architectures: ['LlamaForCausalLM'], vocab: 49152, positions: 8192,
    hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3,
    rope_theta: 100000, rms_norm_eps: 1e-5, qkvBias: false,
  },
  'qwen2.5-0.5b': {
    layout: 'llama', model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], vocab: 151936, positions: 32768,
    hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2,
    rope_theta: 1000000, rms_norm_eps: 1e-6, qkvBias: true,
  },
};
const WIDTH = { F32: 4, F16: 2, BF16: 2 };

function tensorsOf(shape) {
  return shape.layout === 'gpt2' ? gpt2Tensors(shape) : llamaTensors(shape);
}

/** LlamaForCausalLM's / Qwen2ForCausalLM's state dict as save_pretrained writes it, head tied. */
function llamaTensors({ vocab: V, hidden_size: E, intermediate_size: I, num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: G, qkvBias }) {
  const D = E / H;
  const list = [['model.embed_tokens.weight', [V, E], 'normal']];
  for (let l = 0; l < L; ++l) {
    const p = `model.layers.${l}.`;
    list.push([`${p}self_attn.q_proj.weight`, [H * D, E], 'normal']);
    if (qkvBias) list.push([`${p}self_attn.q_proj.bias`, [H * D], 'zero']);
    list.push([`${p}self_attn.k_proj.weight`, [G * D, E], 'normal']);
    if (qkvBias) list.push([`${p}self_attn.k_proj.bias`, [G * D], 'zero']);
    list.push([`${p}self_attn.v_proj.weight`, [G * D, E], 'normal']);
    if (qkvBias) list.push([`${p}self_attn.v_proj.bias`, [G * D], 'zero']);
    list.push(
      [`${p}self_attn.o_proj.weight`, [E, H * D], 'normal'],
      [`${p}mlp.gate_proj.weight`, [I, E], 'normal'], [`${p}mlp.up_proj.weight`, [I, E], 'normal'],
      [`${p}mlp.down_proj.weight`, [E, I], 'normal'],
      [`${p}input_layernorm.weight`, [E], 'one'], [`${p}post_attention_layernorm.weight`, [E], 'one'],
    );
  }
  list.push(['model.norm.weight', [E], 'one']);
  return list;
}

/** The tensors of GPT2LMHeadModel's state dict as save_pretrained writes them: [name, shape, kind]. */
function gpt2Tensors({ n_layer: L, n_embd: E, vocab: VOCAB, positions: POSITIONS }) {
  const list = [['transformer.wte.weight', [VOCAB, E], 'normal'], ['transformer.wpe.weight', [POSITIONS, E], 'normal']];
  for (let l = 0; l < L; ++l) {
    const h = `transformer.h.${l}.`;
    list.push(
      [`${h}ln_1.weight`, [E], 'one'], [`${h}ln_1.bias`, [E], 'zero'],
      [`${h}attn.c_attn.weight`, [E, 3 * E], 'normal'], [`${h}attn.c_attn.bias`, [3 * E], 'zero'],
      [`${h}attn.c_proj.weight`, [E, E], 'normal'], [`${h}attn.c_proj.bias`, [E], 'zero'],
      [`${h}ln_2.weight`, [E], 'one'], [`${h}ln_2.bias`, [E], 'zero'],
      [`${h}mlp.c_fc.weight`, [E, 4 * E], 'normal'], [`${h}mlp.c_fc.bias`, [4 * E], 'zero'],
      [`${h}mlp.c_proj.weight`, [4 * E, E], 'normal'], [`${h}mlp.c_proj.bias`, [E], 'zero'],
    );
  }
  list.push(['transformer.ln_f.weight', [E], 'one'], ['transformer.ln_f.bias', [E], 'zero']);
  return list;
}

/** xorshift32 -> uniform (0, 1); Box-Muller pairs for N(0, sd). */
function normalSource(seed, sd) {
  let s = seed >>> 0 || 1;
  const uniform = () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
  let spare = null;
  return () => {
    if (spare !== null) {
      const v = spare;
      spare = null;
      return v;
    }
    const r = Math.sqrt(-2 * Math.log(uniform())) * sd, a = 2 * Math.PI * uniform();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** float -> IEEE binary16 bits, rounded to nearest even (the values here are normal or zero). */
function toHalf(value) {
  f32[0] = value;
  const x = u32[0], sign = (x >>> 16) & 0x8000;
  const exponent = ((x >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0) return sign;  // |value| < 2^-14: flushed (N(0, 0.02) draws one such in ~10^4)
  let mantissa = x & 0x7fffff;
  let half = sign | (exponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
  return half;
}
function toBfloat16(value) {
  f32[0] = value;
  const x = u32[0];
  return (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
}

export function writeRandomCheckpoint(shapeName, dtype, dir, seed = 1234) {
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`shape '${shapeName}': expected one of ${Object.keys(SHAPES).join(', ')}`);
  const width = WIDTH[dtype];
  if (!width) throw new Error(`dtype '${dtype}': expected F32, F16 or BF16`);
  fs.mkdirSync(dir, { recursive: true });
  const VOCAB = shape.vocab;
  const torchDtype = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype];
  const { layout, vocab: _vocab, positions, qkvBias, ...fields } = shape;
  const config = layout === 'gpt2' ? {
    architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
    n_ctx: positions, n_positions: positions, ...fields, n_inner: null, vocab_size: VOCAB,
    bos_token_id: VOCAB - 1, eos_token_id: VOCAB - 1, tie_word_embeddings: true, torch_dtype: torchDtype,
  } : {
    ...fields, hidden_act: 'silu', attention_bias: false, mlp_bias: false, attention_dropout: 0.0, rope_scaling: null,
    max_position_embeddings: positions, vocab_size: VOCAB, bos_token_id: VOCAB - 1, eos_token_id: VOCAB - 1,
    tie_word_embeddings: true, torch_dtype: torchDtype,
  };
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);

  const tensors = tensorsOf(shape);
  const header = {};
  let offset = 0;
  for (const [name, dims] of tensors) {
    const bytes = dims.reduce((a, b) => a * b, 1) * width;
    header[name] = { dtype, shape: dims, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  header.__metadata__ = { format: 'pt' };
  let headerText = JSON.stringify(header);
  headerText += ' '.repeat((8 - (headerText.length % 8)) % 8);  // data 8-byte aligned, as safetensors writes it
  const fd = fs.openSync(path.join(dir, 'model.safetensors'), 'w');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerText.length));
  fs.writeSync(fd, length);
  fs.writeSync(fd, headerText);
  const normal = normalSource(seed, 0.02);
  const chunk = Buffer.alloc(1 << 20);
  for (const [, dims, kind] of tensors) {
    let remaining = dims.reduce((a, b) => a * b, 1);
    while (remaining > 0) {
      const n = Math.min(remaining, chunk.length / width);
      for (let i = 0; i < n; ++i) {
        const v = kind === 'normal' ? normal() : kind === 'one' ? 1 : 0;
        if (dtype === 'F32') chunk.writeFloatLE(v, 4 * i);
        else chunk.writeUInt16LE(dtype === 'F16' ? toHalf(v) : toBfloat16(v), 2 * i);
      }
      fs.writeSync(fd, chunk, 0, n * width);
      remaining -= n;
    }
  }
  fs.closeSync(fd);

  // byte-level BPE: GPT-2's byte alphabet (bytes_to_unicode) as ids 0..255, no merges
  const vocab = {};
  let extra = 0;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    vocab[String.fromCodePoint(printable ? b : 256 + extra++)] = b;
  }
  for (let id = 256; id < VOCAB - 1; ++id) vocab[`<filler${id}>`] = id;
  vocab['<|endoftext|>'] = VOCAB - 1;
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: VOCAB - 1, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: { ...byteLevel, trim_offsets: false }, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [] },
  };
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  return { dir, bytes: 8 + headerText.length + offset };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [shapeName, dtype, dir] = process.argv.slice(2);
  if (!shapeName || !dtype || !dir) {
    console.error(`usage: node scripts/export/random_checkpoint.js ${Object.keys(SHAPES).join('|')} F32|F16|BF16 DIR`);
    process.exit(2);
  }
  try {
    const { bytes } = writeRandomCheckpoint(shapeName, dtype, dir);
    console.log(`${dir}: ${shapeName} in ${dtype}, model.safetensors ${bytes} bytes`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
