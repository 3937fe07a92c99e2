// The JS API's checks of JavaScript types, with JavaScript-shaped messages: what a tensor, a
// mask, a flag or a list of heads is. What the values mean (shapes against the config, ranges,
// finiteness) the core checks.
import { MhaError } from './errors.js';

// The arguments here are what a caller passed, of any type: `any` is what each check narrows.

/** @param {unknown} value */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${/** @type {{ length?: number }} */ (value).length}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** @param {string} what @param {any} shape  @returns {number} the number of elements */
export function checkShape(what, shape) {
  if (!Array.isArray(shape) && !ArrayBuffer.isView(shape)) {
    throw new MhaError('SHAPE_MISMATCH', `${what}: expected shape to be an array of dimensions, got ${describe(shape)}`);
  }
  const dims = /** @type {ArrayLike<unknown> & Iterable<unknown>} */ (shape); // an array or a typed array
  let numel = 1;
  for (const d of dims) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > 0x7fffffff) {
      throw new MhaError('SHAPE_MISMATCH', `${what}: every dimension must be a non-negative integer, got shape [${Array.from(dims).join(', ')}]`);
    }
    numel *= d;
  }
  return numel;
}

/**
 * @param {string} what
 * @param {any} tensor
 * @returns {{ data: Float32Array, shape: number[] }}
 */
export function tensorArg(what, tensor) {
  if (tensor === null || typeof tensor !== 'object' || !('data' in tensor) || !('shape' in tensor)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a tensor { data, shape }, got ${describe(tensor)}`);
  }
  if (tensor.dtype !== undefined && tensor.dtype !== 'float32') {
    throw new MhaError('INVALID_DTYPE', `${what}: expected dtype 'float32', got '${tensor.dtype}'`);
  }
  const numel = checkShape(what, tensor.shape);
  let { data } = tensor;
  if (!(data instanceof Float32Array)) {
    if (data === null || typeof data !== 'object' || typeof data.length !== 'number') {
      throw new MhaError('INVALID_DTYPE', `${what}: expected data to be a Float32Array or an array of numbers, got ${describe(data)}`);
    }
    data = Float32Array.from(data);
  }
  if (data.length !== numel) {
    throw new MhaError('LENGTH_MISMATCH', `${what}: data has ${data.length} values but shape [${Array.from(tensor.shape).join(', ')}] needs ${numel}`);
  }
  return { data, shape: Array.from(tensor.shape) };
}

/**
 * @param {string} what
 * @param {any} mask
 * @returns {{ dtype: 'bool' | 'float32', data: Uint8Array | Float32Array, shape: number[] } | null}
 */
export function maskArg(what, mask) {
  if (mask === null || mask === undefined) return null;
  if (typeof mask !== 'object' || !('data' in mask) || !('shape' in mask)) {
    throw new MhaError('INVALID_ARGUMENT', `${what}: expected a mask { data, shape, dtype }, got ${describe(mask)}`);
  }
  const numel = checkShape(what, mask.shape);
  const { data } = mask;
  if (data === null || typeof data !== 'object' || typeof data.length !== 'number') {
    throw new MhaError('INVALID_DTYPE', `${what}: expected data to be a Uint8Array, Float32Array or array, got ${describe(data)}`);
  }
  let dtype = mask.dtype;
  if (dtype === undefined) {
    dtype = data instanceof Uint8Array || (data.length > 0 && typeof data[0] === 'boolean') ? 'bool' : 'float32';
  }
  if (dtype !== 'bool' && dtype !== 'float32') {
    throw new MhaError('INVALID_DTYPE', `${what}: only bool and float32 masks are supported, got dtype '${dtype}'`);
  }
  if (data.length !== numel) {
    throw new MhaError('LENGTH_MISMATCH', `${what}: data has ${data.length} values but shape [${Array.from(mask.shape).join(', ')}] needs ${numel}`);
  }
  let values;
  if (dtype === 'bool') {
    values = new Uint8Array(numel);
    for (let i = 0; i < numel; ++i) values[i] = data[i] ? 1 : 0;
  } else {
    values = data instanceof Float32Array ? data : Float32Array.from(data);
  }
  return { dtype, data: values, shape: Array.from(mask.shape) };
}

// Whether two values are alike: arrays element by element, plain objects key by key, anything
// else (numbers, booleans, the module's enum values) by identity.
/** @param {any} a @param {any} b @returns {boolean} */
export function same(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; ++i) if (a[i] !== b[i] && !same(a[i], b[i])) return false;
    return true;
  }
  const plain = (/** @type {unknown} */ v) => v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;
  if (!plain(a) || !plain(b)) return false;
  for (const key in a) if (!same(a[key], b[key])) return false;
  return true;
}

// The head indices as an array ([] for none); the core checks their range.
/** @param {any} ablate @param {number} numHeads @returns {number[]} */
export function ablateArg(ablate, numHeads) {
  if (ablate === undefined || ablate === null) return [];
  if (!Array.isArray(ablate) && !ArrayBuffer.isView(ablate)) {
    throw new MhaError('INVALID_ARGUMENT', `ablateHeads: expected an array of head indices, got ${describe(ablate)}`);
  }
  const heads = /** @type {ArrayLike<unknown> & Iterable<unknown>} */ (ablate); // an array or a typed array
  for (const h of heads) {
    if (!Number.isSafeInteger(h)) {
      throw new MhaError('INVALID_ARGUMENT', `ablateHeads: head index ${String(h)} is out of range; expected an integer from 0 to ${numHeads - 1}`);
    }
  }
  return /** @type {number[]} */ (Array.from(heads));
}

/** @param {string} what @param {any} value @param {{ optional?: boolean }} [options] @returns {number} */
export function positiveInteger(what, value, { optional = false } = {}) {
  if (value === undefined && optional) return 0;
  if (!Number.isInteger(value) || value <= 0 || value > 0x7fffffff) {
    throw new MhaError('INVALID_CONFIG', `${what} must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

// An integer, or undefined when not given; the core checks its range.
/** @param {string} what @param {any} value @returns {number | undefined} */
export function optionalInteger(what, value) {
  if (value !== undefined && !Number.isSafeInteger(value)) {
    throw new MhaError('INVALID_CONFIG', `${what} must be an integer, got ${describe(value)}`);
  }
  return value;
}

/** @param {string} what @param {any} value @param {boolean} fallback @returns {boolean} */
export function flag(what, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new MhaError('INVALID_ARGUMENT', `${what} must be true or false, got ${describe(value)}`);
  }
  return value;
}
