// Which browser-test files failed because the browser's page process crashed, read from the
// TAP that `node --test` writes. A crash ends the browser session, so every later test of that
// file fails too; scripts/test/test.js runs such files once more and says so. A failure of any
// other kind, in any file, is never re-run.
// Node.js built-ins only (scripts/test/test.js runs before `npm ci`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The drivers' words for a page process that is gone: WebKitWebDriver, Chromium (CDP),
// Firefox (BiDi).
export const CRASH = /session deleted because of page crash or hang|Target crashed|Page crashed|Browsing context has been discarded/;

/**
 * The files (relative to root) whose failures include a page crash, when every failing file
 * has one; [] when nothing crashed, when some file failed without a crash, or when a failure
 * names no file.
 *
 * TAP from node --test: a failure is `not ok N - name` followed by an indented YAML block with
 * `location: '…/x.test.js:L:C'` (a file: URL in Node 18) and `error: '…'`.
 */
export function crashedFiles(tap, root) {
  const failures = new Map(); // file -> whether one of its failures is a crash
  let unplaced = false; // a failure that names no file: nothing is re-run
  let block = null;
  const close = () => {
    if (block && block.file) failures.set(block.file, failures.get(block.file) || CRASH.test(block.text));
    else if (block) unplaced = true;
    block = null;
  };
  for (const line of tap.split('\n')) {
    if (/^\s*(not ok|ok) \d+ /.test(line) || /^\s*# Subtest:/.test(line)) {
      close();
      if (/^\s*not ok \d+ /.test(line)) block = { file: null, text: '' };
      continue;
    }
    if (!block) continue;
    block.text += `${line}\n`;
    // Node 18 writes a file: URL, Node 20 a path
    const location = line.match(/^\s*location: '([^']+?\.test\.m?js):\d+:\d+'/);
    if (location && !block.file) {
      const file = location[1].startsWith('file:') ? fileURLToPath(location[1]) : location[1];
      block.file = path.relative(root, file).split(path.sep).join('/');
    }
  }
  close();
  if (unplaced || failures.size === 0 || [...failures.values()].some((crashed) => !crashed)) return [];
  return [...failures.keys()].sort();
}
