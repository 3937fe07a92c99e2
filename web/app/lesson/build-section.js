// One lesson section's build, with the engine's traps told apart from the section's failures.

/**
 * A section's build, computed once more if the WebAssembly engine trapped on the first try
 * (a WebAssembly.RuntimeError: an access out of bounds, an unreachable). The core's own checks
 * return errors rather than trap, so a trap that does not come again is the engine's, not the
 * section's: it is reported as a warning and listed in `retried`; one that comes again is the
 * section's failure.
 * @template T
 * @param {string} title
 * @param {() => T} build
 * @param {string[]} retried
 * @returns {T}
 */
export function buildSection(title, build, retried) {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof WebAssembly.RuntimeError)) throw error;
    console.warn(`lesson section "${title}": the WebAssembly engine trapped (${error.message}); computing it again`, error);
    retried.push(`${title}: ${error.message}`);
    return build();
  }
}
