// A load made once per key: every call with the key gets the same promise, unless that promise
// failed; then it is forgotten, and the next call loads again (a network error, a missing file
// that has since been built, or a load that was given bad options is not remembered).

/**
 * `load(key, ...args)` behind a cache of promises by key. Object keys may be held weakly
 * (`{ weak: true }`), so that an entry goes with its key.
 * @template K, T
 * @param {(key: K, ...args: any[]) => T | Promise<T>} load
 * @param {{ weak?: boolean }} [options]
 * @returns {(key: K, ...args: any[]) => Promise<T>}
 */
export function loadOnce(load, { weak = false } = {}) {
  const promises = weak ? new WeakMap() : new Map();
  return (key, ...args) => {
    let promise = promises.get(key);
    if (!promise) {
      promise = (async () => load(key, ...args))();
      promises.set(key, promise);
      promise.catch(() => {
        if (promises.get(key) === promise) promises.delete(key);
      });
    }
    return promise;
  };
}
