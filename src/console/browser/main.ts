/**
 * The customer console: a thin client of the public REST API in the browser. Sign in with an API key (kept in
 * this tab's session storage), then the pages, each reached by a #/path link:
 *   #/identities  #/intents  #/intents/<id>  #/proofs  #/proofs/<id>  #/pending  #/webhooks
 * Every page is re-read every POLL_MS while shown (not while the tab is hidden) and re-drawn when what it read
 * changed, so states advance without a reload. A page makes at most two requests per read, so polling stays
 * within the default per-key rate limit (60 a minute) with room for the reader's own actions; a 429 waits its
 * Retry-After. An intent's page follows the intent instead (a read held by the API until the intent changes, then
 * the next at once): its stages show as they happen, and a page left open costs a request per change or per wait.
 */
import { api, ApiFailure, session } from './api.js';
import { h } from './dom.js';
import { identitiesPage } from './pages/identities.js';
import { intentPage, intentsPage } from './pages/intents.js';
import { pendingPage } from './pages/pending.js';
import { proofPage, proofsPage } from './pages/proofs.js';
import { webhooksPage } from './pages/webhooks.js';
import type { Page } from './page.js';

const POLL_MS = 4000;

const ROUTES: [RegExp, (m: RegExpMatchArray) => Page][] = [
  [/^#\/identities$/, () => identitiesPage],
  [/^#\/intents$/, () => intentsPage],
  [/^#\/intents\/([0-9a-f-]{36})$/, (m) => intentPage(m[1])],
  [/^#\/proofs$/, () => proofsPage],
  [/^#\/proofs\/([0-9a-f-]{36})$/, (m) => proofPage(m[1])],
  [/^#\/pending$/, () => pendingPage],
  [/^#\/webhooks$/, () => webhooksPage],
];

const NAV: [string, string][] = [
  ['#/identities', 'Identities'],
  ['#/intents', 'Intents'],
  ['#/proofs', 'Proofs'],
  ['#/pending', 'Pending'],
  ['#/webhooks', 'Webhooks'],
];

const root = document.getElementById('app') as HTMLElement;
let generation = 0;
/** aborts the shown page's reads (a long poll may be held) when another page is shown */
let leaving: AbortController | undefined;

function signInView(message?: string): Node {
  const input = h('input', { id: 'api-key', name: 'api_key', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true });
  const error = h('p', { id: 'signin-error', class: 'error', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    {
      id: 'signin',
      class: 'card',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const key = input.value.trim();
        if (!key) {
          error.textContent = 'Enter an API key.';
          return;
        }
        session.signIn(key);
        try {
          await api('GET', '/v1/me');
          location.hash = '#/identities';
          route();
        } catch (err) {
          session.signOut();
          error.textContent = err instanceof ApiFailure ? `Sign-in refused: ${err.message}` : String(err);
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'Your API key stays in this tab (session storage) and is sent only to this gateway.'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'),
    error,
  );
  return h('main', { id: 'main' }, form);
}

function shell(current: string, content: Node): Node {
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h(
      'ul',
      {},
      NAV.map(([href, label]) => h('li', {}, h('a', { href, 'aria-current': current.startsWith(href) ? 'page' : undefined }, label))),
    ),
  );
  const signOut = h(
    'button',
    {
      type: 'button',
      id: 'signout',
      onclick: () => {
        session.signOut();
        location.hash = '';
        route();
      },
    },
    'Sign out',
  );
  return h(
    'div',
    { class: 'shell' },
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h('header', {}, h('span', { class: 'brand' }, 'Proof gateway console'), nav, signOut),
    h('main', { id: 'main', tabindex: '-1' }, content),
  );
}

/** Shows the page for the current hash and keeps it current until the hash changes. */
async function route(): Promise<void> {
  const mine = ++generation;
  leaving?.abort();
  const left = new AbortController();
  leaving = left;
  if (!session.key()) {
    root.replaceChildren(signInView());
    document.title = 'Sign in — console';
    return;
  }
  const hash = location.hash || '#/identities';
  const found = ROUTES.map(([re, make]) => [hash.match(re), make] as const).find(([m]) => m);
  const page = found ? found[1](found[0] as RegExpMatchArray) : undefined;
  const content = h('div', { class: 'page', 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading…'));
  root.replaceChildren(shell(hash, content));
  if (!page) {
    content.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No such page. '), h('a', { href: '#/identities' }, 'Identities'));
    return;
  }
  document.title = `${page.title} — console`;
  let last = '';
  let waited = false;
  for (;;) {
    try {
      const data = await page.load(left.signal);
      if (mine !== generation) return;
      waited = page.waits?.(data) ?? false;
      const seen = JSON.stringify(data);
      if (seen !== last) {
        last = seen;
        const focused = document.activeElement?.id;
        content.replaceChildren(page.view(data, () => (last = '')));
        content.setAttribute('aria-busy', 'false');
        if (focused) document.getElementById(focused)?.focus();
      }
    } catch (err) {
      if (mine !== generation) return;
      if (err instanceof ApiFailure && err.status === 401) {
        session.signOut();
        root.replaceChildren(signInView(`Signed out: ${err.message}`));
        return;
      }
      const wait = err instanceof ApiFailure && err.retryAfter ? err.retryAfter * 1000 : 0;
      const text = `Could not load: ${err instanceof Error ? err.message : String(err)}${wait ? ` (retrying in ${wait / 1000} s)` : ''}`;
      content.replaceChildren(h('p', { class: 'error', role: 'alert' }, text));
      last = '';
      waited = false;
      await new Promise((r) => setTimeout(r, wait));
    }
    // a page whose read waits for a change reads again at once (while the tab is shown); the others poll
    if (!waited || document.hidden)
      do await new Promise((r) => setTimeout(r, POLL_MS));
      while (document.hidden && mine === generation);
    if (mine !== generation) return;
  }
}

window.addEventListener('hashchange', () => void route());
void route();
