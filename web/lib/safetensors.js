// Weights from files: PyTorch state_dicts as .safetensors (F32, F16, BF16, F64 converted to
// float32) or as JSON in the golden-case format of tests/golden, turned into the config and
// state_dict that `new mha.MultiHeadAttention(config).loadStateDict(stateDict)` takes.
//
// A .safetensors file (https://github.com/huggingface/safetensors):
//   bytes 0..8      N, the header's length (unsigned 64-bit little-endian)
//   bytes 8..8+N    a JSON header { name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: { string: string } }
//   bytes 8+N..     the data; offsets count from here, tensors are row-major little-endian
//
// Plain JavaScript with no imports beyond errors.js, so it also runs in a worker and in Node.

import { MhaError, NUM_HEADS_MISSING } from './errors.js';

/** @typedef {import('./index.js').FileTensor} FileTensor */
/** @typedef {import('./index.js').MhaErrorCode} MhaErrorCode */
/** @typedef {'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL'} Dtype */
/** @typedef {'F32' | 'F16' | 'BF16' | 'F64'} FloatDtype */
/**
 * A file's config as written (snake_case, as PyTorch names the arguments, or camelCase); read
 * by configValue, which checks nothing: inferConfig checks each value it uses.
 * @typedef {Record<string, unknown>} FileConfig
 */

/** Bytes per element, by safetensors dtype. @type {Record<Dtype, number>} */
const DTYPE_SIZE = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
/** @type {Set<unknown>} */
const CONVERTIBLE = new Set(['F32', 'F16', 'BF16', 'F64']);

/** Parameter names of torch.nn.MultiheadAttention. */
export const ATTENTION_PARAMETER_NAMES = Object.freeze(['in_proj_weight', 'q_proj_weight', 'k_proj_weight', 'v_proj_weight',
  'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias']);

const MAX_HEADER_BYTES = 100 * 1024 * 1024; // the reference implementation's limit

/** @param {string} message @param {MhaErrorCode} [code] */
function fail(message, code = 'INVALID_ARGUMENT') {
  return new MhaError(code, message);
}

/** @param {readonly number[]} shape */
function shapeText(shape) {
  return `[${shape.join(', ')}]`;
}

/** @param {unknown} input @param {string} what @returns {Uint8Array} */
function toBytes(input, what) {
  // A plain Uint8Array view, also of a Node.js Buffer (whose slice() does not copy).
  if (input instanceof Uint8Array) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer)) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw fail(`${what}: expected an ArrayBuffer or Uint8Array, got ${input === null ? 'null' : typeof input}`);
}

/** IEEE 754 half → float. @param {number} h */
function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

const f32Scratch = new Float32Array(1);
const f32Bits = new Uint32Array(f32Scratch.buffer);

/** float → IEEE 754 half, rounded to nearest even (overflow to ±Infinity, NaN kept). */
/** @param {number} value */
function floatToHalf(value) {
  f32Scratch[0] = value;
  const bits = f32Bits[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // a half subnormal, m · 2^-24, or zero
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    let half = mantissa >>> shift;
    if (rest > halfway || (rest === halfway && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;  // a carry rounds up into the exponent
  return sign | half;
}

/** The values of one tensor as float32, whatever their alignment in the file. @param {FloatDtype} dtype @param {Uint8Array} bytes */
function convert(dtype, bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = bytes.byteLength / DTYPE_SIZE[dtype];
  if (dtype === 'F32') {
    // a copy into a fresh, aligned buffer; the file is little-endian as is every engine we run on
    return new Float32Array(new Uint8Array(bytes).buffer);
  }
  const out = new Float32Array(count);
  if (dtype === 'F16') {
    for (let i = 0; i < count; ++i) out[i] = halfToFloat(view.getUint16(2 * i, true));
  } else if (dtype === 'BF16') {
    // bfloat16 is the upper half of a float32
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; ++i) bits[i] = view.getUint16(2 * i, true) << 16;
  } else if (dtype === 'F64') {
    for (let i = 0; i < count; ++i) out[i] = view.getFloat64(8 * i, true);
  }
  return out;
}

/**
 * Parse a .safetensors file. Every tensor is returned as float32 (F16, BF16 and F64 converted).
 * @param {ArrayBuffer | Uint8Array} input the whole file
 * @param {{ fileName?: string }} [options] named in error messages
 * @returns {{ tensors: Record<string, FileTensor>, metadata: Record<string, string> }}
 */
export function parseSafetensors(input, { fileName = 'safetensors file' } = {}) {
  const bytes = toBytes(input, fileName);
  if (bytes.byteLength < 8) {
    throw fail(`${fileName}: truncated: a .safetensors file starts with an 8-byte header length, but the file has ${bytes.byteLength} bytes`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerLength > MAX_HEADER_BYTES) {
    throw fail(`${fileName}: the header length field says ${headerLength} bytes (more than ${MAX_HEADER_BYTES}); this is not a .safetensors file`);
  }
  if (8 + headerLength > bytes.byteLength) {
    throw fail(`${fileName}: truncated: the header needs bytes 8 to ${8 + headerLength}, but the file has ${bytes.byteLength} bytes`);
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw fail(`${fileName}: the ${headerLength}-byte header is not valid UTF-8 JSON: ${messageOf(error)}`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw fail(`${fileName}: the header must be a JSON object of tensors, got ${Array.isArray(header) ? 'an array' : typeof header}`);
  }
  const dataStart = 8 + headerLength;
  const dataLength = bytes.byteLength - dataStart;
  /** @type {Record<string, string>} */
  const metadata = {};
  /** @type {Record<string, FileTensor>} */
  const tensors = {};
  /** @type {[number, number, string][]} */
  const ranges = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
        throw fail(`${fileName}: __metadata__ must be an object of strings`);
      }
      for (const [key, value] of Object.entries(entry)) {
        if (typeof value !== 'string') throw fail(`${fileName}: __metadata__.${key} must be a string, got ${typeof value}`);
        metadata[key] = value;
      }
      continue;
    }
    const what = `${fileName}: tensor '${name}'`;
    if (entry === null || typeof entry !== 'object') throw fail(`${what}: expected { dtype, shape, data_offsets }, got ${entry === null ? 'null' : typeof entry}`);
    const { dtype, shape, data_offsets: offsets } = entry;
    if (!Object.hasOwn(DTYPE_SIZE, dtype)) {
      throw fail(`${what}: unknown dtype ${JSON.stringify(dtype)}; expected one of F32, F16, BF16, F64`, 'INVALID_DTYPE');
    }
    if (!isFloatDtype(dtype)) {
      throw fail(`${what}: dtype ${dtype} is not a floating-point type; expected F32, F16, BF16 or F64`, 'INVALID_DTYPE');
    }
    if (!isShape(shape)) {
      throw fail(`${what}: shape must be a list of non-negative integers, got ${JSON.stringify(shape)}`, 'SHAPE_MISMATCH');
    }
    if (!Array.isArray(offsets) || offsets.length !== 2 || !isShape(offsets) || offsets[1] < offsets[0]) {
      throw fail(`${what}: data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got ${JSON.stringify(offsets)}`);
    }
    const numel = shape.reduce((/** @type {number} */ a, b) => a * b, 1);
    const expectedBytes = numel * DTYPE_SIZE[dtype];
    const [begin, end] = offsets;
    if (end - begin !== expectedBytes) {
      throw fail(`${what}: shape ${shapeText(shape)} of ${dtype} needs ${expectedBytes} bytes (${numel} × ${DTYPE_SIZE[dtype]}), but data_offsets [${begin}, ${end}] hold ${end - begin}`, 'LENGTH_MISMATCH');
    }
    if (end > dataLength) {
      throw fail(`${what}: truncated: its data_offsets [${begin}, ${end}] end past the ${dataLength} data bytes the file has (file size ${bytes.byteLength}, expected at least ${dataStart + end})`, 'LENGTH_MISMATCH');
    }
    ranges.push([begin, end, name]);
    tensors[name] = { data: convert(dtype, bytes.subarray(dataStart + begin, dataStart + end)), shape: shape.slice(), dtype };
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 1; i < ranges.length; ++i) {
    if (ranges[i][0] < ranges[i - 1][1]) {
      throw fail(`${fileName}: tensors '${ranges[i - 1][2]}' [${ranges[i - 1][0]}, ${ranges[i - 1][1]}] and '${ranges[i][2]}' [${ranges[i][0]}, ${ranges[i][1]}] overlap`);
    }
  }
  return { tensors, metadata };
}

/**
 * Write tensors as a .safetensors file (F32, or F16 rounded to nearest even), e.g. to save the
 * weights a page shows.
 * @param {Record<string, { data: ArrayLike<number>, shape: readonly number[] }>} tensors
 * @param {Record<string, string>} [metadata]
 * @param {{ dtype?: 'F32' | 'F16' }} [options]
 * @returns {Uint8Array}
 */
export function toSafetensors(tensors, metadata, { dtype = 'F32' } = {}) {
  if (dtype !== 'F32' && dtype !== 'F16') throw fail(`toSafetensors: dtype must be 'F32' or 'F16', got ${JSON.stringify(dtype)}`, 'INVALID_DTYPE');
  const size = DTYPE_SIZE[dtype];
  /** @type {Record<string, unknown>} */
  const header = {};
  if (metadata && Object.keys(metadata).length) header.__metadata__ = { ...metadata };
  let offset = 0;
  const entries = Object.entries(tensors);
  for (const [name, t] of entries) {
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== numel) {
      throw fail(`tensor '${name}': data has ${t.data.length} values but shape ${shapeText(t.shape)} needs ${numel}`, 'LENGTH_MISMATCH');
    }
    header[name] = { dtype, shape: Array.from(t.shape), data_offsets: [offset, offset + size * numel] };
    offset += size * numel;
  }
  let headerText = JSON.stringify(header);
  headerText += ' '.repeat((8 - ((8 + new TextEncoder().encode(headerText).length) % 8)) % 8); // data 8-byte aligned
  const headerBytes = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerBytes.length, true);
  view.setUint32(4, 0, true);
  out.set(headerBytes, 8);
  let position = 8 + headerBytes.length;
  for (const [, t] of entries) {
    if (dtype === 'F16') {
      for (let i = 0; i < t.data.length; ++i) view.setUint16(position + 2 * i, floatToHalf(t.data[i]), true);
      position += 2 * t.data.length;
      continue;
    }
    const values = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data);
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), position);
    position += values.byteLength;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON state_dicts (tests/golden case format, or a bare { name: { shape, data } })

/** How the golden-case files (and Python's json) write non-finite numbers. */
/** @type {Record<string, number>} */
const SPECIAL_VALUES = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/**
 * @param {unknown} json  parsed JSON, checked here
 * @param {string} fileName
 * @returns {{ tensors: Record<string, FileTensor>, config: FileConfig | null }}
 */
function parseJsonStateDict(json, fileName) {
  if (!isObject(json)) {
    throw fail(`${fileName}: expected a JSON object (a state_dict, or { "config", "state_dict" }), got ${Array.isArray(json) ? 'an array' : json === null ? 'null' : typeof json}`);
  }
  const raw = isRecord(json.state_dict) ? json.state_dict : json;
  /** @type {Record<string, FileTensor>} */
  const tensors = {};
  for (const [name, t] of Object.entries(raw)) {
    if (raw === json && (name === 'config' || name === 'name' || name === 'description')) continue;
    const what = `${fileName}: tensor '${name}'`;
    if (!isRecord(t) || !Array.isArray(t.shape) || !Array.isArray(t.data)) {
      throw fail(`${what}: expected { "shape": [...], "data": [...] }, got ${t === null ? 'null' : typeof t}`);
    }
    if (t.dtype !== undefined && t.dtype !== 'float32') {
      throw fail(`${what}: expected dtype "float32", got ${JSON.stringify(t.dtype)}`, 'INVALID_DTYPE');
    }
    if (!isShape(t.shape)) {
      throw fail(`${what}: shape must be a list of non-negative integers, got ${JSON.stringify(t.shape)}`, 'SHAPE_MISMATCH');
    }
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== numel) {
      throw fail(`${what}: shape ${shapeText(t.shape)} needs ${numel} values, the data has ${t.data.length}`, 'LENGTH_MISMATCH');
    }
    const data = new Float32Array(numel);
    for (let i = 0; i < numel; ++i) {
      const v = t.data[i];
      if (typeof v === 'number') data[i] = v;
      else if (typeof v === 'string' && Object.hasOwn(SPECIAL_VALUES, v)) data[i] = SPECIAL_VALUES[v];
      else throw fail(`${what}: value ${i} is ${JSON.stringify(v)}, not a number`, 'INVALID_DTYPE');
    }
    tensors[name] = { data, shape: t.shape.slice(), dtype: 'float32' };
  }
  return { tensors, config: isRecord(json.config) ? json.config : null };
}

// ---------------------------------------------------------------------------------------------
// From tensors to an nn.MultiheadAttention config and state_dict

/**
 * Names under `prefix` (e.g. 'encoder.layers.0.self_attn.'), with the prefix removed.
 * @param {Record<string, FileTensor>} tensors @param {string | undefined} prefix @param {string} fileName
 * @returns {{ stateDict: Record<string, FileTensor>, prefix: string }}
 */
function selectLayer(tensors, prefix, fileName) {
  const names = Object.keys(tensors);
  if (prefix === undefined) {
    // One attention layer in the file: find it by its out_proj.weight.
    const prefixes = [...new Set(names.filter((n) => n.endsWith('out_proj.weight')).map((n) => n.slice(0, -'out_proj.weight'.length)))];
    if (prefixes.length === 0) {
      throw fail(`${fileName}: no tensor named 'out_proj.weight' (or '<layer>.out_proj.weight'): this is not an nn.MultiheadAttention state_dict; tensors: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`, 'UNKNOWN_PARAMETER');
    }
    if (prefixes.length > 1) {
      throw fail(`${fileName}: holds ${prefixes.length} attention layers (${prefixes.map((p) => `'${p}'`).join(', ')}); choose one with the option prefix`, 'INVALID_ARGUMENT');
    }
    [prefix] = prefixes;
  }
  /** @type {Record<string, FileTensor>} */
  const selected = {};
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const short = name.slice(prefix.length);
    if (ATTENTION_PARAMETER_NAMES.includes(short)) selected[short] = tensors[name];
    else if (prefix === '') {
      throw fail(`${fileName}: tensor '${name}' is not a parameter of nn.MultiheadAttention (expected ${ATTENTION_PARAMETER_NAMES.join(', ')})`, 'UNKNOWN_PARAMETER');
    }
  }
  if (!selected['out_proj.weight']) {
    throw fail(`${fileName}: no tensor '${prefix}out_proj.weight'; tensors: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`, 'UNKNOWN_PARAMETER');
  }
  return { stateDict: selected, prefix };
}

/** @param {FileConfig | null} config @param {string} snake @param {string} camel @returns {any} checked by the caller */
function configValue(config, snake, camel) {
  if (!config) return undefined;
  const v = config[snake] ?? config[camel];
  return v === null ? undefined : v;
}

/**
 * @param {string} fileName @param {string} prefix @param {string} name
 * @param {{ shape: number[] }} tensor @param {number[]} expected @param {string} why
 */
function expectShape(fileName, prefix, name, tensor, expected, why) {
  const { shape } = tensor;
  if (shape.length !== expected.length || shape.some((d, i) => d !== expected[i])) {
    throw fail(`${fileName}: tensor '${prefix}${name}' has shape ${shapeText(shape)}, expected ${shapeText(expected)} (${why})`, 'SHAPE_MISMATCH');
  }
}

/**
 * The AttentionConfig of a state_dict: from the file's config where it has one, the rest read
 * from the shapes; every tensor's shape is checked against it.
 * @param {Record<string, FileTensor>} stateDict
 * @param {FileConfig | null} fileConfig
 * @param {import('./index.js').StateDictFileOptions} options
 * @param {string} fileName
 * @param {string} prefix
 * @returns {import('./index.js').StateDictFile['config']}
 */
function inferConfig(stateDict, fileConfig, options, fileName, prefix) {
  const outWeight = stateDict['out_proj.weight'];
  if (outWeight.shape.length !== 2 || outWeight.shape[0] !== outWeight.shape[1]) {
    throw fail(`${fileName}: tensor '${prefix}out_proj.weight' has shape ${shapeText(outWeight.shape)}, expected [E, E]`, 'SHAPE_MISMATCH');
  }
  const E = outWeight.shape[0];
  const fileE = configValue(fileConfig, 'embed_dim', 'embedDim');
  if (fileE !== undefined && fileE !== E) {
    throw fail(`${fileName}: config embed_dim is ${fileE} but tensor '${prefix}out_proj.weight' has shape ${shapeText(outWeight.shape)}`, 'SHAPE_MISMATCH');
  }
  const numHeads = options.numHeads ?? configValue(fileConfig, 'num_heads', 'numHeads');
  if (numHeads === undefined) {
    throw fail(`${fileName}: the number of heads is not in the file (no config / __metadata__ num_heads); pass it as the option numHeads`, NUM_HEADS_MISSING);
  }
  if (!Number.isInteger(numHeads) || numHeads < 1 || E % numHeads !== 0) {
    throw fail(`${fileName}: num_heads must be a positive integer dividing embed_dim ${E}, got ${numHeads}`, 'INVALID_CONFIG');
  }
  const headDim = E / numHeads;
  const packed = 'in_proj_weight' in stateDict;
  let kdim = E;
  let vdim = E;
  let numKvHeads = options.numKvHeads ?? configValue(fileConfig, 'num_kv_heads', 'numKvHeads') ?? numHeads;
  if (packed) {
    for (const name of ['q_proj_weight', 'k_proj_weight', 'v_proj_weight']) {
      if (name in stateDict) throw fail(`${fileName}: has both '${prefix}in_proj_weight' and '${prefix}${name}'; nn.MultiheadAttention has one or the other`, 'UNKNOWN_PARAMETER');
    }
    expectShape(fileName, prefix, 'in_proj_weight', stateDict.in_proj_weight, [3 * E, E], `3·embed_dim × embed_dim, embed_dim ${E} from out_proj.weight`);
    if (numKvHeads !== numHeads) throw fail(`${fileName}: num_kv_heads ${numKvHeads} ≠ num_heads ${numHeads} needs separate q/k/v_proj_weight, not in_proj_weight`, 'INVALID_CONFIG');
  } else {
    for (const name of ['q_proj_weight', 'k_proj_weight', 'v_proj_weight']) {
      if (!(name in stateDict)) throw fail(`${fileName}: no tensor '${prefix}in_proj_weight' nor '${prefix}${name}'`, 'UNKNOWN_PARAMETER');
      if (stateDict[name].shape.length !== 2) throw fail(`${fileName}: tensor '${prefix}${name}' has shape ${shapeText(stateDict[name].shape)}, expected 2 dimensions`, 'SHAPE_MISMATCH');
    }
    expectShape(fileName, prefix, 'q_proj_weight', stateDict.q_proj_weight, [E, E], `embed_dim ${E} from out_proj.weight`);
    const kvRows = stateDict.k_proj_weight.shape[0];
    if (kvRows % headDim !== 0) {
      throw fail(`${fileName}: tensor '${prefix}k_proj_weight' has shape ${shapeText(stateDict.k_proj_weight.shape)}; its rows must be a multiple of head_dim ${headDim} (embed_dim ${E} / num_heads ${numHeads})`, 'SHAPE_MISMATCH');
    }
    numKvHeads = options.numKvHeads ?? configValue(fileConfig, 'num_kv_heads', 'numKvHeads') ?? kvRows / headDim;
    kdim = stateDict.k_proj_weight.shape[1];
    vdim = stateDict.v_proj_weight.shape[1];
    expectShape(fileName, prefix, 'k_proj_weight', stateDict.k_proj_weight, [numKvHeads * headDim, kdim], `num_kv_heads ${numKvHeads} × head_dim ${headDim} rows`);
    expectShape(fileName, prefix, 'v_proj_weight', stateDict.v_proj_weight, [numKvHeads * headDim, vdim], `num_kv_heads ${numKvHeads} × head_dim ${headDim} rows`);
  }
  const kvWidth = numKvHeads * headDim;
  const bias = 'in_proj_bias' in stateDict;
  if (bias) {
    expectShape(fileName, prefix, 'in_proj_bias', stateDict.in_proj_bias, [E + 2 * kvWidth], 'embed_dim + 2 · num_kv_heads · head_dim');
    if (!('out_proj.bias' in stateDict)) throw fail(`${fileName}: has '${prefix}in_proj_bias' but no '${prefix}out_proj.bias'`, 'UNKNOWN_PARAMETER');
    expectShape(fileName, prefix, 'out_proj.bias', stateDict['out_proj.bias'], [E], 'embed_dim');
  } else if ('out_proj.bias' in stateDict) {
    throw fail(`${fileName}: has '${prefix}out_proj.bias' but no '${prefix}in_proj_bias'`, 'UNKNOWN_PARAMETER');
  }
  const addBiasKv = 'bias_k' in stateDict;
  if (addBiasKv !== ('bias_v' in stateDict)) throw fail(`${fileName}: bias_k and bias_v come together; found only one`, 'UNKNOWN_PARAMETER');
  if (addBiasKv) {
    for (const name of ['bias_k', 'bias_v']) {
      const t = stateDict[name];
      const flat = t.shape.length === 1 && t.shape[0] === kvWidth;
      if (!flat) expectShape(fileName, prefix, name, t, [1, 1, kvWidth], 'num_kv_heads · head_dim');
    }
  }
  const batchFirst = options.batchFirst ?? configValue(fileConfig, 'batch_first', 'batchFirst') ?? false;
  const addZeroAttn = options.addZeroAttn ?? configValue(fileConfig, 'add_zero_attn', 'addZeroAttn') ?? false;
  // out_proj.weight is (E, E): the out-projection keeps the model width
  return { embedDim: E, numHeads, numKvHeads, kdim, vdim, outDim: E, bias, addBiasKv, addZeroAttn: !!addZeroAttn, batchFirst: !!batchFirst };
}

/**
 * The config a safetensors file's __metadata__ carries: a "config" JSON string, or flat keys.
 * @param {Record<string, string>} metadata
 * @returns {FileConfig | null}
 */
function metadataConfig(metadata) {
  if (metadata.config) {
    try {
      const config = JSON.parse(metadata.config);
      return isRecord(config) ? config : null;
    } catch {
      return null;
    }
  }
  /** @type {FileConfig} */
  const config = {};
  for (const key of ['embed_dim', 'num_heads', 'num_kv_heads', 'batch_first', 'add_zero_attn']) {
    if (key in metadata) {
      const v = metadata[key];
      config[key] = v === 'true' ? true : v === 'false' ? false : Number(v);
    }
  }
  return Object.keys(config).length ? config : null;
}

/** @param {Uint8Array} bytes */
function looksLikeSafetensors(bytes) {
  if (bytes.byteLength < 9) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  return bytes[8] === 0x7b /* { */ && n >= 2 && view.getUint32(4, true) === 0;
}

/**
 * Load a PyTorch nn.MultiheadAttention state_dict from a file's contents: .safetensors bytes,
 * JSON text or bytes (the golden-case format, or a bare state_dict), or parsed JSON.
 * @param {ArrayBuffer | Uint8Array | string | object} input
 * @param {import('./index.js').StateDictFileOptions} [options]
 * @returns {import('./index.js').StateDictFile}
 */
export function loadStateDictFile(input, options = {}) {
  const fileName = options.fileName ?? 'state_dict';
  /** @type {Record<string, FileTensor>} */
  let tensors;
  /** @type {FileConfig | null} */
  let fileConfig = null;
  /** @type {import('./index.js').StateDictFile['format']} */
  let format;
  /** @type {Record<string, string>} */
  let metadata = {};
  if (typeof input === 'string' || (input !== null && typeof input === 'object' && !ArrayBuffer.isView(input) && !(input instanceof ArrayBuffer))) {
    /** @type {unknown} */
    let json = input;
    if (typeof input === 'string') {
      try {
        json = JSON.parse(input);
      } catch (error) {
        throw fail(`${fileName}: not valid JSON: ${messageOf(error)}`);
      }
    }
    ({ tensors, config: fileConfig } = parseJsonStateDict(json, fileName));
    format = 'json';
  } else {
    const bytes = toBytes(input, fileName);
    const first = bytes.findIndex((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
    if (looksLikeSafetensors(bytes) || bytes[first] !== 0x7b) {
      ({ tensors, metadata } = parseSafetensors(bytes, { fileName }));
      fileConfig = metadataConfig(metadata);
      format = 'safetensors';
    } else {
      let json;
      try {
        json = JSON.parse(new TextDecoder().decode(bytes));
      } catch (error) {
        throw fail(`${fileName}: neither a .safetensors file nor valid JSON: ${messageOf(error)}`);
      }
      ({ tensors, config: fileConfig } = parseJsonStateDict(json, fileName));
      format = 'json';
    }
  }
  const { stateDict, prefix } = selectLayer(tensors, options.prefix, fileName);
  const config = inferConfig(stateDict, fileConfig, options, fileName, prefix);
  /** @type {Record<string, import('./index.js').Tensor>} */
  const plain = {};
  for (const [name, t] of Object.entries(stateDict)) plain[name] = { data: t.data, shape: t.shape };
  return { config, stateDict: plain, format, prefix, metadata };
}

// ---------------------------------------------------------------------------------------------
// What parsed JSON holds, checked

/** @param {unknown} value @returns {value is Record<string, unknown>} an object, not an array */
function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** @param {unknown} value @returns {value is Record<string, any>} any object (its fields checked where read) */
function isRecord(value) {
  return value !== null && typeof value === 'object';
}

/** @param {unknown} value @returns {value is number[]} a list of non-negative integers */
function isShape(value) {
  return Array.isArray(value) && value.every((d) => Number.isSafeInteger(d) && d >= 0);
}

/** @param {unknown} dtype @returns {dtype is FloatDtype} */
function isFloatDtype(dtype) {
  return CONVERTIBLE.has(dtype);
}

/** @param {unknown} error */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}
