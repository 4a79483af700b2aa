/** Identities: status and stage, ADI and key page, the account address per chain (with a copy button), credits. */
import { api, type Json } from '../api.js';
import { badge, copyButton, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';

function identityCard(i: Json): HTMLElement {
  const accounts = (i.chain_accounts as Json[]).map((a) =>
    h(
      'li',
      { 'data-chain': a.chain },
      h('span', { class: 'chain' }, a.chain),
      ' ',
      mono(a.address),
      ' ',
      copyButton(a.address, `${a.chain} account address`),
      a.deployed ? '' : h('span', { class: 'muted' }, ' (not deployed yet)'),
    ),
  );
  return h(
    'article',
    { class: 'card', 'data-identity': i.id, 'aria-labelledby': `idt-${i.id}` },
    h('h2', { id: `idt-${i.id}` }, i.name, ' ', badge(i.status)),
    facts([
      ['Stage', i.stage],
      ['ADI', mono(i.adi_url)],
      ['Key page', mono(i.key_page_url)],
      ['Credits', h('span', { class: 'credits' }, String(i.credit_balance), i.credit_balance_stale ? ' (recorded)' : '')],
      ['Created', time(i.created_at)],
      ['Active since', time(i.provisioned_at)],
      ...(i.error_message ? ([['Error', h('span', { class: 'error' }, i.error_message)]] as [string, Node][]) : []),
    ]),
    h('h3', {}, 'Accounts'),
    accounts.length ? h('ul', { class: 'accounts' }, accounts) : h('p', { class: 'muted' }, 'No chain account yet.'),
  );
}

export const identitiesPage: Page = {
  title: 'Identities',
  load: () => api('GET', '/v1/identities?limit=100'),
  view: (data: Json) =>
    h(
      'section',
      { 'aria-labelledby': 'page-title' },
      h('h1', { id: 'page-title' }, 'Identities'),
      h('p', { class: 'muted' }, `${data.pagination?.total ?? data.identities.length} identities; this page follows their state as it changes.`),
      data.identities.length ? data.identities.map(identityCard) : h('p', {}, 'No identity yet: create one with POST /v1/identity.'),
    ),
};
