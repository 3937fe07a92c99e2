// Long work on a page's main thread, in pieces: between them the page draws and answers input.

/**
 * A new task at the back of the event loop's queue: a message to ourselves. Not scheduler.yield,
 * whose continuations go before the tasks already waiting (timers, messages, a worker's answer),
 * nor setTimeout, which waits at least 4 ms once nested.
 */
export function nextTask() {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => { port1.close(); resolve(undefined); };
    port2.postMessage(null);
  });
}
