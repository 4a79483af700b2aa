/**
 * Multi-signature helpers on the proof-cycle bench (test/transaction/support.ts): turn the identity's key page into
 * a panel through governance, and co-sign a pending ledger transaction with one seat through POST /v1/sign.
 */
import { expect } from 'vitest';
import { publicKeyHashHex } from '../../src/identity/keys.js';
import type { newClientKey } from '../identity/devnet.js';
import { api, sign, type CycleBench } from '../transaction/support.js';

type ClientKey = ReturnType<typeof newClientKey>;

/** Adds `seats` to the identity's page 1 and sets its accept threshold, through one governance operation it signs alone. */
export async function makePanel(b: CycleBench, seats: ClientKey[], threshold: number) {
  const op = await api(b, 'POST', '/v1/governance', {
    identity: b.identity.adiUrl,
    operations: [...seats.map((k) => ({ type: 'add_key', public_key_hash: publicKeyHashHex(k.publicKey) })), { type: 'set_threshold', threshold }],
  });
  expect(op.status, JSON.stringify(op.body)).toBe(201);
  const s = await api(b, 'POST', `/v1/governance/${op.body.governance_op_id}/signature`, {
    signature: sign(op.body.signing_data.hash_to_sign, b.identity.key.secretKey),
    public_key: b.identity.key.publicKey,
  });
  expect(s.status, JSON.stringify(s.body)).toBe(200);
  const deadline = Date.now() + 30_000;
  while ((await api(b, 'GET', `/v1/governance/${op.body.governance_op_id}`)).body.status !== 'executed') {
    if (Date.now() > deadline) throw new Error('governance operation did not execute');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One seat's vote (approve, reject, abstain) on the pending ledger transaction `txHash` of the bench's identity. */
export async function cosign(b: CycleBench, txHash: string, k: ClientKey, vote: string) {
  const req = await api(b, 'POST', '/v1/sign', { type: 'pending_tx', target_id: txHash, identity: b.identity.adiUrl, public_key: k.publicKey, vote });
  expect(req.status, JSON.stringify(req.body)).toBe(201);
  const r = await api(b, 'POST', `/v1/sign/${req.body.sign_request_id}/signature`, {
    signature: sign(req.body.signing_data.data_for_signature, k.secretKey),
    public_key: k.publicKey,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}
