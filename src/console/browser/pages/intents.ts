/**
 * Intents: the list (status, stage), and an intent's page: its legs with the three chain transactions each, a
 * stage timeline per chain (attested, anchored, executed, observed, recorded; the times from the proof's custody
 * chain once the proof exists), the co-signing progress of its ledger transaction, and its proof.
 */
import { api, follow, type Json } from '../api.js';
import { badge, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';

/** how long one read of an intent's page waits for the intent to change, in seconds (a fresh request follows) */
const FOLLOW_WAIT_S = 25;

export const STAGES = ['attested', 'anchored', 'executed', 'observed', 'recorded'] as const;
type Stage = (typeof STAGES)[number];

/** Whether a chain's legs have passed `stage`, from what the intent shows of them. */
function reached(stage: Stage, legs: Json[]): boolean {
  const all = (f: (l: Json) => boolean) => legs.length > 0 && legs.every(f);
  switch (stage) {
    case 'attested':
      return all((l) => l.attested_by.length > 0);
    case 'anchored':
      return all((l) => Boolean(l.transactions.execute_comprehensive_proof));
    case 'executed':
      return all((l) => Boolean(l.transactions.execute_governance_proof_direct));
    case 'observed':
      return all((l) => l.observed_by.length > 0);
    case 'recorded':
      return all((l) => Boolean(l.result_id));
  }
}

function timeline(chain: string, legs: Json[], custody: Json[] | undefined): HTMLElement {
  const atOf = (stage: Stage) => custody?.find((e) => e.type === stage && e.data?.chain === chain)?.at as string | undefined;
  return h(
    'section',
    { class: 'card', 'data-chain': chain, 'aria-label': `Stages on ${chain}` },
    h('h3', {}, chain),
    h(
      'ol',
      { class: 'timeline' },
      STAGES.map((s) => {
        const at = atOf(s);
        const done = Boolean(at) || reached(s, legs);
        return h(
          'li',
          { class: done ? 'done' : 'todo', 'data-stage': s, 'data-done': String(done) },
          h('span', { class: 'mark', 'aria-hidden': 'true' }, done ? '✓' : '○'),
          h('span', { class: 'stage' }, s),
          ' ',
          h('span', { class: 'sr-only' }, done ? '(done)' : '(not yet)'),
          at ? time(at) : '',
        );
      }),
    ),
  );
}

function legCard(l: Json): HTMLElement {
  const tx = l.transactions;
  return h(
    'article',
    { class: 'card', 'data-leg': l.leg_id },
    h('h3', {}, `Leg ${l.leg_id} `, badge(l.status)),
    facts([
      ['Chain', `${l.chain} (${l.evm_chain_id})`],
      ['Anchor', mono(l.anchor_id)],
      ['createAnchor', mono(tx.create_anchor)],
      ['executeComprehensiveProof', mono(tx.execute_comprehensive_proof)],
      ['executeGovernanceProofDirect', mono(tx.execute_governance_proof_direct)],
      ['Attested by', l.attested_by.length ? l.attested_by.join(', ') : '—'],
      ['Observed by', l.observed_by.length ? l.observed_by.join(', ') : '—'],
      ['Result record', mono(l.result_id)],
      ...(l.error ? ([['Error', h('span', { class: 'error' }, l.error)]] as [string, Node][]) : []),
    ]),
  );
}

function signingProgress(p: Json | null): HTMLElement {
  if (!p) return h('p', { class: 'muted' }, 'No co-signing progress yet (the signature is not submitted, or the ledger did not answer).');
  const pct = Math.min(100, Math.round((100 * p.collected_signatures) / Math.max(1, p.required_signatures)));
  return h(
    'div',
    { class: 'progress-wrap' },
    h('label', { for: 'cosign-progress' }, `Signatures: ${p.collected_signatures} of ${p.required_signatures}`),
    h('progress', { id: 'cosign-progress', max: p.required_signatures, value: p.collected_signatures, 'aria-valuetext': `${pct}%` }),
    facts([
      ['Key page', mono(p.key_page)],
      ['Ledger status', p.ledger_status],
      ['Awaiting', p.awaiting_authorities.length ? p.awaiting_authorities.join(', ') : '—'],
      [
        'Signed by',
        p.signers?.length
          ? h(
              'ul',
              {},
              p.signers.map((s: Json) => h('li', {}, mono(s.public_key_hash), ` ${s.vote}`)),
            )
          : '—',
      ],
    ]),
  );
}

export const intentsPage: Page = {
  title: 'Intents',
  load: () => api('GET', '/v1/transactions?limit=100'),
  view: (data: Json) =>
    h(
      'section',
      { 'aria-labelledby': 'page-title' },
      h('h1', { id: 'page-title' }, 'Intents'),
      data.transactions.length
        ? h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              {},
              h('caption', { class: 'sr-only' }, 'Intents, newest first'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', { scope: 'col' }, 'Intent'),
                  h('th', { scope: 'col' }, 'Status'),
                  h('th', { scope: 'col' }, 'Stage'),
                  h('th', { scope: 'col' }, 'Created'),
                ),
              ),
              h(
                'tbody',
                {},
                data.transactions.map((t: Json) =>
                  h(
                    'tr',
                    { 'data-intent': t.intent_id },
                    h('td', {}, h('a', { href: `#/intents/${t.intent_id}` }, t.intent_id.slice(0, 8)), ' ', h('span', { class: 'muted' }, t.intent_type)),
                    h('td', {}, badge(t.status)),
                    h('td', { class: 'stage' }, t.stage),
                    h('td', {}, time(t.created_at)),
                  ),
                ),
              ),
            ),
          )
        : h('p', {}, 'No intent yet: prepare one with POST /v1/transaction.'),
    ),
};

/** Co-signatures outstanding: one made on the ledger outside the gateway is not announced to a waiting read, so the page polls. */
const cosigning = (intent: Json) => intent.signing_progress?.is_ready === false;

export function intentPage(id: string): Page {
  // the last answer and its ETag: each read after the first waits for the intent to change (or FOLLOW_WAIT_S)
  let held: { intent: Json; etag?: string } | undefined;
  return {
    title: 'Intent',
    load: async (signal) => {
      const r = await follow(`/v1/transaction/${id}`, held?.etag, held && cosigning(held.intent) ? 0 : FOLLOW_WAIT_S, signal);
      if (r !== 'unchanged') held = { intent: r.body, etag: r.etag };
      const intent = held!.intent;
      const custody = intent.proof_id ? await api('GET', `/v1/proof/${intent.proof_id}/custody`) : undefined;
      return { intent, custody: custody?.events };
    },
    waits: ({ intent }: Json) => !cosigning(intent),
    view: ({ intent: t, custody }: Json) => {
      const chains = [...new Set((t.legs as Json[]).map((l) => l.chain))];
      return h(
        'section',
        { 'aria-labelledby': 'page-title' },
        h('p', {}, h('a', { href: '#/intents' }, '← Intents')),
        h(
          'h1',
          { id: 'page-title' },
          'Intent ',
          h('span', { class: 'mono' }, t.intent_id.slice(0, 8)),
          ' ',
          h('span', { id: 'intent-status' }, badge(t.status)),
        ),
        facts([
          ['Stage', h('span', { id: 'intent-stage' }, t.stage)],
          ['Type', t.intent_type],
          ['Operation', mono(t.operation_id)],
          ['Ledger transaction', mono(t.tx_hash)],
          ['Created', time(t.created_at)],
          ['Submitted', time(t.submitted_at)],
          ['Completed', time(t.completed_at)],
          ['Proof', t.proof_id ? h('a', { href: `#/proofs/${t.proof_id}`, id: 'proof-link' }, `${t.proof_id.slice(0, 8)} (${t.proof?.status ?? ''})`) : '—'],
          ...(t.error_message ? ([['Error', h('span', { class: 'error' }, t.error_message)]] as [string, Node][]) : []),
        ]),
        h('h2', {}, 'Co-signers'),
        signingProgress(t.signing_progress),
        h('h2', {}, 'Stages per chain'),
        h(
          'div',
          { class: 'grid' },
          chains.map((c) =>
            timeline(
              c,
              t.legs.filter((l: Json) => l.chain === c),
              custody,
            ),
          ),
        ),
        h('h2', {}, 'Legs'),
        h('div', { class: 'grid' }, t.legs.map(legCard)),
      );
    },
  };
}
