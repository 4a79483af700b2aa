/**
 * Proofs: the organization's proofs (from its intents), and a proof's page: what it proves, its custody chain as
 * hash-linked events, and "verify in the browser", which runs the offline verifier's checks on the bundle as the
 * API serves it (or on a bundle file the reader picks) and shows each check's result.
 */
import { api, apiText, type Json } from '../api.js';
import { badge, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';
import { verifyInBrowser, type BundleVerification } from '../verifier.js';

interface Outcome {
  source: string;
  running: boolean;
  result?: BundleVerification;
  error?: string;
}

/** Outcomes by proof id: kept across the page's redraws. */
const outcomes = new Map<string, Outcome>();

function outcomeView(o: Outcome | undefined): HTMLElement {
  const box = h('div', { id: 'verify-result', role: 'status', 'aria-live': 'polite' });
  if (!o) return box;
  if (o.running) {
    box.append(h('p', {}, `Verifying ${o.source}…`));
    return box;
  }
  if (o.error || !o.result) {
    box.append(h('p', { class: 'error', 'data-verdict': 'fail' }, `Could not verify ${o.source}: ${o.error}`));
    return box;
  }
  const r = o.result;
  const failed = r.checks.filter((c) => !c.ok).length;
  box.append(
    h(
      'p',
      { class: r.valid ? 'verdict ok' : 'verdict bad', 'data-verdict': r.valid ? 'pass' : 'fail', id: 'verdict' },
      r.valid
        ? `Valid: all ${r.checks.length} checks pass (${o.source})${r.complete ? '' : '; partial: some legs failed'}`
        : `Invalid: ${failed} of ${r.checks.length} checks fail (${o.source})`,
    ),
    h(
      'ol',
      { class: 'checks', 'aria-label': 'Checks' },
      r.checks.map((c) =>
        h(
          'li',
          { class: c.ok ? 'pass' : 'fail', 'data-check': c.name, 'data-ok': String(c.ok) },
          h('span', { class: 'mark', 'aria-hidden': 'true' }, c.ok ? '✓' : '✗'),
          h('span', { class: 'sr-only' }, c.ok ? 'passes: ' : 'fails: '),
          h('code', {}, c.name),
          c.detail ? h('span', { class: 'detail' }, ` ${c.detail}`) : '',
        ),
      ),
    ),
  );
  return box;
}

async function runVerification(proofId: string, source: string, text: () => Promise<string>, box: HTMLElement): Promise<void> {
  const o: Outcome = { source, running: true };
  outcomes.set(proofId, o);
  box.replaceWith((box = outcomeView(o)));
  try {
    o.result = await verifyInBrowser(await text());
  } catch (err) {
    o.error = err instanceof Error ? err.message : String(err);
  }
  o.running = false;
  const now = document.getElementById('verify-result');
  now?.replaceWith(outcomeView(o));
}

function custodyView(c: Json): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'custody-title' },
    h('h2', { id: 'custody-title' }, 'Custody chain ', badge(c.chain_valid ? 'intact' : 'broken')),
    c.chain_valid ? '' : h('p', { class: 'error' }, `Broken at event ${c.broken_at}: ${c.reason}`),
    h(
      'ol',
      { class: 'custody' },
      (c.events as Json[]).map((e) =>
        h(
          'li',
          { 'data-event': e.type },
          h('strong', {}, `${e.seq}. ${e.type}`),
          e.data?.chain ? ` on ${e.data.chain}` : '',
          ' — ',
          time(e.at),
          facts([
            ['hash', mono(e.hash)],
            ['prev_hash', mono(e.prev_hash)],
            ['data_hash', mono(e.data_hash)],
          ]),
        ),
      ),
    ),
  );
}

export const proofsPage: Page = {
  title: 'Proofs',
  load: async () => {
    const { transactions } = await api('GET', '/v1/transactions?limit=100');
    return (transactions as Json[])
      .filter((t) => t.proof_id)
      .map((t) => ({ id: t.proof_id, intent: t.intent_id, status: t.proof?.status, at: t.completed_at }));
  },
  view: (rows: Json[]) =>
    h(
      'section',
      { 'aria-labelledby': 'page-title' },
      h('h1', { id: 'page-title' }, 'Proofs'),
      rows.length
        ? h(
            'ul',
            { class: 'list' },
            rows.map((p) =>
              h(
                'li',
                { 'data-proof': p.id },
                h('a', { href: `#/proofs/${p.id}` }, `Proof ${p.id.slice(0, 8)}`),
                ' of intent ',
                h('a', { href: `#/intents/${p.intent}` }, p.intent.slice(0, 8)),
                ' ',
                badge(p.status ?? 'complete'),
                ' ',
                time(p.at),
              ),
            ),
          )
        : h('p', {}, 'No proof yet: a proof exists once an intent completes.'),
    ),
};

export function proofPage(id: string): Page {
  return {
    title: 'Proof',
    load: async () => ({ proof: await api('GET', `/v1/proof/${id}`), custody: await api('GET', `/v1/proof/${id}/custody`) }),
    view: ({ proof: p, custody }: Json) => {
      let box = outcomeView(outcomes.get(id));
      const file = h('input', { id: 'bundle-file', type: 'file', accept: 'application/json,.json' }) as HTMLInputElement;
      file.addEventListener('change', () => {
        const f = file.files?.[0];
        if (f) void runVerification(id, `file ${f.name}`, () => f.text(), (box = document.getElementById('verify-result') ?? box));
      });
      return h(
        'section',
        { 'aria-labelledby': 'page-title' },
        h('h1', { id: 'page-title' }, 'Proof ', h('span', { class: 'mono' }, id.slice(0, 8)), ' ', badge(p.status)),
        facts([
          ['Intent', h('a', { href: `#/intents/${p.intent_id}` }, p.intent_id)],
          ['Operation', mono(p.operation_id)],
          ['Bundle hash', mono(p.bundle_hash)],
          ['Created', time(p.created_at)],
        ]),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'verify-title' },
          h('h2', { id: 'verify-title' }, 'Verify in the browser'),
          h('p', { class: 'muted' }, 'Runs the offline verifier on the bundle here, in this page: nothing is sent anywhere.'),
          h(
            'button',
            {
              type: 'button',
              id: 'verify',
              onclick: () =>
                void runVerification(
                  id,
                  'the bundle served by the API',
                  () => apiText(`/v1/proof/${id}/bundle`),
                  document.getElementById('verify-result') ?? box,
                ),
            },
            'Verify in the browser',
          ),
          h('label', { for: 'bundle-file' }, 'Or verify a bundle file'),
          file,
          box,
        ),
        custodyView(custody),
      );
    },
  };
}
