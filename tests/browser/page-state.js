// The explorer page's state (its explorer, web/explorer/controller.js), as the tests read it: the page module
// exports it, and attachExplorer makes it window.explorer for predicates in waitForFunction.

/** After the page has loaded: window.explorer is the page's ExplorerState. */
export async function attachExplorer(page) {
  await page.evaluate(async () => { window.explorer = (await import('/app/main.js')).explorer; });
}

/** Nothing is being computed and the weights table shows the head and sentence shown. */
export async function settled(page, timeout = 30000) {
  await page.waitForFunction(() => {
    const x = window.explorer;
    return x && x.busy === 0 && x.result && document.getElementById('weights-table')?.dataset.version === x.shownKey();
  }, null, { timeout });
}

/** Wait until predicate(window.explorer) holds and the page has settled. */
export async function waitForExplorer(page, predicate, arg, timeout = 30000) {
  await page.waitForFunction(predicate, arg, { timeout });
  await settled(page, timeout);
}

/**
 * Between tests that share one page: the explorer back to what the page opened with, through
 * its controller (explorer.reset()), no reload; resolves once it is drawn.
 */
export async function resetExplorer(page, timeout = 30000) {
  await page.evaluate(async () => {
    const problems = await window.explorer.reset();
    if (problems.length) throw new Error(`reset: ${JSON.stringify(problems)}`);
  });
  await settled(page, timeout);
}
