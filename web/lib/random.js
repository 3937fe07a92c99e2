// mulberry32: a seeded generator of uniform numbers in [0, 1) from a 32-bit state, the same
// sequence in every engine. Shared by sampling (a link's seed writes the same text again), the
// head detectors' repeated tokens, the roles' bootstrap and the lesson's seeded inputs.

/**
 * @param {number} seed  an integer 0 .. 2^32 - 1
 * @returns {() => number}
 */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
