// MhaError: the one error type the API throws for bad input, with a `code` saying which kind.

/** Status codes of the core (cpp/include/mha/status.h), by number. */
const CODE_NAMES = [
  'OK',
  'INVALID_CONFIG',
  'SHAPE_MISMATCH',
  'LENGTH_MISMATCH',
  'INVALID_DTYPE',
  'UNKNOWN_PARAMETER',
  'TOO_LARGE',
  'INVALID_ARGUMENT',
];

export class MhaError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'MhaError';
    this.code = code;
  }
}

export function codeName(statusCode) {
  return CODE_NAMES[statusCode] ?? 'INVALID_ARGUMENT';
}
