/**
 * Pending: the ledger transactions waiting for this organization's keys, and signing them here. The signer's
 * Ed25519 key is generated in (or imported into) the browser's WebCrypto and never leaves it: for a vote the
 * console asks the API for the bytes to sign (POST /v1/sign), signs them locally and sends the signature.
 */
import { api, ApiFailure, type Json } from '../api.js';
import { badge, copyButton, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';
import { forgetSigner, generateSigner, importSigner, loadSigner, type Signer } from '../signer.js';

let signer: Signer | undefined;
let signerLoaded = false;
/** what happened to each action's last vote, by tx_hash (kept across redraws) */
const votes = new Map<string, string>();

function say(id: string, text: string): void {
  const el = document.getElementById(id);
  if (el) el.textContent = text;
}

async function vote(a: Json, choice: 'approve' | 'reject', refresh: () => void): Promise<void> {
  const s = signer;
  const statusId = `vote-${a.tx_hash}`;
  if (!s) return say(statusId, 'Generate or import a signing key first.');
  votes.set(a.tx_hash, `${choice}: preparing…`);
  say(statusId, votes.get(a.tx_hash)!);
  try {
    const req = await api('POST', '/v1/sign', { type: 'pending_tx', target_id: a.tx_hash, identity: a.identity_url, public_key: s.publicKey, vote: choice });
    const signature = await s.sign(req.signing_data.data_for_signature);
    const res = await api('POST', `/v1/sign/${req.sign_request_id}/signature`, { signature, public_key: s.publicKey });
    votes.set(a.tx_hash, `${choice}: ${res.status}, ${res.signature_count ?? '?'} signature(s)${res.is_ready ? ', ready' : ''}`);
  } catch (err) {
    votes.set(a.tx_hash, `${choice} failed: ${err instanceof ApiFailure ? `${err.code}: ${err.message}` : String(err)}`);
  }
  say(statusId, votes.get(a.tx_hash)!);
  refresh();
}

function keyPanel(refresh: () => void): HTMLElement {
  const seed = h('input', { id: 'seed', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'seed-help' }) as HTMLInputElement;
  const status = h('p', { id: 'key-status', role: 'status' });
  const done = (s: Signer | undefined, text: string) => {
    signer = s;
    status.textContent = text;
    refresh();
  };
  const fail = (err: unknown) => (status.textContent = `Key refused: ${err instanceof Error ? err.message : String(err)}`);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'key-title' },
    h('h2', { id: 'key-title' }, 'Your signing key'),
    signer
      ? facts([
          [
            'Public key',
            h('span', {}, h('code', { class: 'mono', id: 'signer-public-key' }, signer.publicKey), ' ', copyButton(signer.publicKey, 'public key')),
          ],
          ['Key hash (as on a key page)', h('code', { class: 'mono', id: 'signer-key-hash' }, signer.publicKeyHash)],
        ])
      : h('p', {}, 'No key in this browser yet.'),
    h('p', { class: 'muted' }, 'The private key is held by this browser (WebCrypto, not extractable) and never sent.'),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', id: 'generate-key', onclick: () => generateSigner().then((s) => done(s, 'New key generated.'), fail) }, 'Generate a key'),
      signer
        ? h('button', { type: 'button', id: 'forget-key', onclick: () => forgetSigner().then(() => done(undefined, 'Key forgotten.'), fail) }, 'Forget key')
        : '',
    ),
    h('label', { for: 'seed' }, 'Or import a key (32-byte Ed25519 seed, 64 hex)'),
    h('p', { id: 'seed-help', class: 'muted' }, 'Imported keys are stored non-extractable; the seed is not kept.'),
    h(
      'div',
      { class: 'row' },
      seed,
      h(
        'button',
        {
          type: 'button',
          id: 'import-key',
          onclick: () =>
            importSigner(seed.value).then((s) => {
              seed.value = '';
              done(s, 'Key imported.');
            }, fail),
        },
        'Import',
      ),
    ),
    status,
  );
}

function actionCard(a: Json, refresh: () => void): HTMLElement {
  return h(
    'article',
    { class: 'card', 'data-action': a.tx_hash },
    h('h3', {}, `${a.type} `, badge(a.status)),
    h('label', { for: `sig-${a.tx_hash}` }, `Signatures: ${a.collected_signatures} of ${a.required_signatures}`),
    h('progress', { id: `sig-${a.tx_hash}`, max: a.required_signatures, value: a.collected_signatures }),
    facts([
      ['Identity', mono(a.identity_url)],
      ['Transaction', mono(a.tx_hash)],
      ['Memo', a.memo ?? '—'],
      ['Awaiting', a.awaiting_authorities.length ? a.awaiting_authorities.join(', ') : '—'],
      ['Expires', time(a.expires_at)],
    ]),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', class: 'approve', disabled: !signer, onclick: () => vote(a, 'approve', refresh) }, 'Approve'),
      h('button', { type: 'button', class: 'reject', disabled: !signer, onclick: () => vote(a, 'reject', refresh) }, 'Reject'),
    ),
    h('p', { id: `vote-${a.tx_hash}`, class: 'vote-status', role: 'status' }, votes.get(a.tx_hash) ?? ''),
  );
}

export const pendingPage: Page = {
  title: 'Pending',
  load: async () => {
    if (!signerLoaded) {
      signer = await loadSigner().catch(() => undefined);
      signerLoaded = true;
    }
    const data = await api('GET', '/v1/pending');
    return { actions: data.actions, stats: data.stats, signer: signer?.publicKey ?? null };
  },
  view: (data: Json, refresh) =>
    h(
      'section',
      { 'aria-labelledby': 'page-title' },
      h('h1', { id: 'page-title' }, 'Pending'),
      keyPanel(refresh),
      h('h2', {}, `Waiting for your keys (${data.stats.total})`),
      data.actions.length ? data.actions.map((a: Json) => actionCard(a, refresh)) : h('p', { id: 'no-pending' }, 'Nothing waits for a signature.'),
    ),
};
