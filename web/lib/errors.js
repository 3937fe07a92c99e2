// MhaError: the one error type the API throws for bad input, with a `code` saying which kind.
// The core's codes are read from each WebAssembly module (its StatusCode enum), never copied;
// the JS layer's own codes are DISPOSED, WORKER_ERROR, TIMEOUT, MODEL_FILE and NUM_HEADS_MISSING.

/** @typedef {import('./index.js').MhaErrorCode} MhaErrorCode */

export class MhaError extends Error {
  /** @param {MhaErrorCode} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = 'MhaError';
    this.code = code;
  }
}

/** A weights file that does not say how many heads it has (safetensors.js): retry with the option numHeads. */
export const NUM_HEADS_MISSING = 'NUM_HEADS_MISSING';

/**
 * A module's status codes: `ok`, the value of success; `name(value)`, the code's name
 * (Module.StatusCode.<NAME>.value, cpp/bindings/boundary.h); and `check(result, what)`, which
 * gives back a result of the module ({ code, message, … }) that succeeded and throws the
 * MhaError of one that did not (its message after `what: ` when `what` is given).
 * @param {{StatusCode: Record<string, {value: number}>}} module
 */
export function statusCodes(module) {
  // the module's names are the core's codes, which index.d.ts lists in MhaErrorCode
  /** @type {MhaErrorCode[]} */
  const names = [];
  for (const [name, entry] of Object.entries(module.StatusCode)) {
    if (entry !== null && typeof entry === 'object' && typeof entry.value === 'number') names[entry.value] = /** @type {MhaErrorCode} */ (name);
  }
  const ok = module.StatusCode.OK.value;
  const name = (/** @type {number} */ value) => names[value] ?? 'INVALID_ARGUMENT';
  /**
   * @template {{ code: number, message: string }} R
   * @param {R} result
   * @param {string} [what]
   * @returns {R}
   */
  function check(result, what) {
    if (result.code !== ok) throw new MhaError(name(result.code), what ? `${what}: ${result.message}` : result.message);
    return result;
  }
  return { ok, name, check };
}
