// Every relative link and image in README.md and docs/*.md names a file that exists, and every
// #anchor names a heading (GitHub's slugs) or an id of the page it points to.
//
//   node --test tests/js/docs-links.test.js

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown) {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links keep their text
    .replace(/<[^>]+>/g, (tag) => (/^<[a-z][\w-]*>$/i.test(tag) ? tag.slice(1, -1) : '')) // <mha-explorer> keeps its name
    .replace(/[`*_~]/g, (c) => (c === '_' ? c : ''));
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}_ -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown page has: its headings' slugs (repeats get -1, -2 …) and its ids. */
function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  const code = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;
  for (const line of markdown.replace(code, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of prose(markdown).matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** [text](target) and ![alt](target) links, and href/src attributes, outside code. */
function linksOf(markdown) {
  const text = prose(markdown);
  const links = [];
  for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push(m[1]);
  for (const m of text.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push(m[1]);
  return links;
}

const external = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target); // http:, https:, mailto: …

test('README.md is at most 250 lines, and the docs it names are there', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  console.log(`  README.md: ${lines} lines (at most 250); pages checked: ${pages.join(', ')}`);
  assert.ok(lines <= 250, `README.md has ${lines} lines, expected at most 250`);
  for (const doc of ['api', 'element', 'exactness', 'performance', 'training', 'reliability']) {
    assert.ok(fs.existsSync(path.join(root, 'docs', `${doc}.md`)), `docs/${doc}.md is missing`);
  }
});

test('the slugs follow GitHub: punctuation dropped, code and tags kept as text', () => {
  assert.equal(slug('Two cores: one thread or two'), 'two-cores-one-thread-or-two');
  assert.equal(slug('The `<mha-explorer>` element and the iframe embed'), 'the-mha-explorer-element-and-the-iframe-embed');
  assert.equal(slug('In Node.js'), 'in-nodejs');
  assert.equal(slug('Tensors, masks and options'), 'tensors-masks-and-options');
});

for (const page of pages) {
  test(`${page}: every relative link and anchor resolves`, () => {
    const markdown = fs.readFileSync(path.join(root, page), 'utf8');
    const links = linksOf(markdown).filter((t) => !external(t));
    const broken = [];
    for (const target of links) {
      const [file, anchor] = target.split('#');
      const resolved = file ? path.resolve(path.dirname(path.join(root, page)), decodeURIComponent(file)) : path.join(root, page);
      if (!resolved.startsWith(root)) {
        broken.push(`${target}: leaves the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        broken.push(`${target}: no file ${path.relative(root, resolved)}`);
        continue;
      }
      if (anchor && resolved.endsWith('.md')) {
        const anchors = anchorsOf(fs.readFileSync(resolved, 'utf8'));
        if (!anchors.has(anchor)) broken.push(`${target}: no heading #${anchor} in ${path.relative(root, resolved)} (it has ${[...anchors].map((a) => `#${a}`).join(', ')})`);
      }
    }
    console.log(`  ${page}: ${links.length} relative links, ${broken.length} broken`);
    assert.deepEqual(broken, [], `${page} has broken links:\n  ${broken.join('\n  ')}`);
  });
}
