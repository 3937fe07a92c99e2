// Long work on a page's main thread, in pieces: between them the page draws and answers input.

/** A new task of the event loop: scheduler.yield where there is one, else a message to ourselves (no 4 ms clamp of setTimeout). */
export function nextTask() {
  const { scheduler } = /** @type {{ scheduler?: { yield?: () => Promise<void> } }} */ (globalThis);
  if (scheduler && typeof scheduler.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => { port1.close(); resolve(undefined); };
    port2.postMessage(null);
  });
}
