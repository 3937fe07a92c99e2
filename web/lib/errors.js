// MhaError: the one error type the API throws for bad input, with a `code` saying which kind.
// The core's codes are read from each WebAssembly module (its StatusCode enum), never copied.

export class MhaError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'MhaError';
    this.code = code;
  }
}

/**
 * A module's status codes: `ok`, the value of success, and `name(value)`, the code's name
 * (Module.StatusCode.<NAME>.value, cpp/bindings/status_codes.h).
 * @param {{StatusCode: Record<string, {value: number}>}} module
 */
export function statusCodes(module) {
  const names = [];
  for (const [name, entry] of Object.entries(module.StatusCode)) {
    if (entry !== null && typeof entry === 'object' && typeof entry.value === 'number') names[entry.value] = name;
  }
  return { ok: module.StatusCode.OK.value, name: (value) => names[value] ?? 'INVALID_ARGUMENT' };
}
