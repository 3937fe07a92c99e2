// The page's state in its URL (web/explorer/url.js says what a link holds): the page starts from
// the link it was opened with, each change of the explorer is a history entry, back and forward
// show the entry's state, and what a link asked for that could not be shown is said in a note
// under the status line. All of it goes through the explorer; nothing here reads the controls.
import { linkOf, linkProblems, readLink, followLink } from '../explorer/url.js';
import { explorer, PAGE_VIEWS } from './explorer.js';
import { drawn } from './draw.js';
import { askBeforeLinkDownload, sizeText, ASK_ABOVE_BYTES } from './hub.js';
import { keepLinkWrite } from './write.js';

/** The page's element for a selector: the markup has every one asked for here. */
const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
/** The panel an element is in. */
const panelOf = (/** @type {string} */ selector) => /** @type {HTMLElement} */ ($(selector).closest('.panel'));

const urlOf = (/** @type {URLSearchParams} */ params) => `${location.pathname}${[...params].length ? `?${params}` : ''}${location.hash}`;

/** @param {string[]} problems */
function showNote(problems) {
  const note = $('#url-note');
  note.textContent = problems.length ? `This link: ${problems.join('; ')}.` : '';
  note.hidden = problems.length === 0;
}

/**
 * After a link was applied and drawn: its view scrolled to, and the URL names what is shown (the
 * defaults where it was bad).
 * @param {string[]} problems
 */
async function settle(problems) {
  await drawn(); // a panel is where it stays once the views above it are drawn
  showNote(problems);
  const view = explorer.view && PAGE_VIEWS[explorer.view];
  if (view) panelOf(view).scrollIntoView({ block: 'start' });
  const url = urlOf(linkOf(explorer));
  if (url !== location.pathname + location.search + location.hash) history.replaceState(null, '', url);
  document.dispatchEvent(new CustomEvent('mha-link-applied', { detail: { problems } }));
}

/** Start the explorer from the page's URL; resolves once it shows what the link names. */
export async function startFromLink() {
  const note = document.createElement('p');
  note.id = 'url-note';
  note.className = 'error';
  note.setAttribute('role', 'alert');
  note.hidden = true;
  $('#status').after(note);
  const params = new URLSearchParams(location.search);
  const { want, problems } = readLink(params);
  // a model opened from files or a URL is not opened by a link: what it wrote is, once it is opened again
  if (params.get('source') === 'model' && want.write) keepLinkWrite(/** @type {import('../sources/source.js').WriteState} */ (want.write));
  if (want.source && !(await askBeforeLinkDownload(want.source))) {
    problems.push(`the model it names was not downloaded (more than ${sizeText(ASK_ABOVE_BYTES)}: open it from the Hub box when you want it); showing the designed heads`);
    want.source = { id: 'designed' };
  }
  const later = await explorer.start(want);
  if (explorer.status === 'error') return;
  await settle([...problems, ...linkProblems(later, params, explorer)]);
  keepStateInUrl();
}

function keepStateInUrl() {
  let applying = false;
  let pending = 0;
  const record = () => {
    if (applying || explorer.busy !== 0) return;
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      if (applying || explorer.busy !== 0) return;
      const url = urlOf(linkOf(explorer));
      if (url !== location.pathname + location.search + location.hash) history.pushState(null, '', url);
    });
  };
  explorer.addEventListener('change', (event) => {
    if (/** @type {CustomEvent<{ keys: string[] }>} */ (event).detail.keys.some((k) => ['source', 'sentence', 'selectedHead', 'pair', 'result', 'busy', 'view'].includes(k))) record();
  });
  // the part of the explorer a reader works in becomes the view
  for (const [name, selector] of Object.entries(PAGE_VIEWS)) {
    const panel = panelOf(selector);
    panel.addEventListener('pointerdown', () => explorer.setView(name));
    panel.addEventListener('keydown', () => { if (explorer.view !== name) explorer.setView(name); });
  }
  window.addEventListener('popstate', async () => {
    applying = true;
    let problems;
    try {
      problems = await followLink(explorer, location.search);
    } catch (error) {
      problems = [`it could not be followed (${error instanceof Error ? error.message : String(error)}); showing what it reached`];
    } finally {
      applying = false;
    }
    await settle(problems);
  });
}
