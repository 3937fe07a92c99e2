// A load made once per key: every call with the key gets the same promise, unless that promise
// failed; then it is forgotten, and the next call loads again (a network error, a missing file
// that has since been built, or a load that was given bad options is not remembered).

/**
 * `load(key, ...args)` behind a cache of promises by key. Object keys may be held weakly
 * (`{ weak: true }`), so that an entry goes with its key.
 * @template K, T
 * @template {any[]} A
 * @param {(key: K, ...args: A) => T | Promise<T>} load
 * @param {{ weak?: boolean }} [options]
 * @returns {(key?: K, ...args: A) => Promise<T>}  key: none for a load made once in all
 */
export function loadOnce(load, { weak = false } = {}) {
  // a weak cache takes object keys only (the caller's promise with { weak: true })
  const promises = /** @type {Map<K, Promise<T>>} */ (weak ? new WeakMap() : new Map());
  return (key, ...args) => {
    const k = /** @type {K} */ (key);
    let promise = promises.get(k);
    if (!promise) {
      promise = (async () => load(k, ...args))();
      promises.set(k, promise);
      promise.catch(() => {
        if (promises.get(k) === promise) promises.delete(k);
      });
    }
    return promise;
  };
}
