/**
 * Provider signing, the gateway's side of identities whose key it holds:
 *   key        generated at creation (src/identity/provider-keys.ts), sealed under a fresh data key wrapped by the
 *              current KEK; the creation answer carries a one-shot retrieval URL for the mnemonic, nothing else
 *   mnemonic   GET /v1/identity/{id}/mnemonic/{token}: answered exactly once, before it expires; a second call, an
 *              expired or an unknown token are the same 404
 *   policy     what the gateway signs for the identity (src/services/provider-policy.ts), set with PATCH by a key
 *              holding provider:manage
 *   signing    runProviderSign: the workflow provider-sign-<kind>-<id>, whose activity unseals the key and signs the
 *              stored hash; the API then submits the signature through the path a client's signature takes
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from './errors.js';
import type { Db } from '../db/client.js';
import { insertProviderKey, takeMnemonic } from '../db/provider.js';
import { kekRing, newDataKey, newProviderKey, openMnemonic, sealMnemonic, sealPrivateKey, unwrapDataKey, type KekRing } from '../identity/provider-keys.js';
import { runProviderSign, type ProviderSignInput, type ProviderSignResult } from '../temporal/provider.js';
import type { Caller, ServiceDeps } from './deps.js';

/** The one 404 of the mnemonic URL: spent, expired, unknown token, unknown or malformed identity id, another organization. */
export const MNEMONIC_GONE = { code: 'MNEMONIC_NOT_FOUND', message: 'No mnemonic to retrieve here: the URL was used, has expired, or never existed' };

export const MNEMONIC_WARNING =
  'This is the only copy the gateway will ever show: store it offline now. Anyone holding it controls the identity; this URL answers 404 from now on.';

/** The configured KEKs; provider signing is refused without them. */
export function providerRing(deps: Pick<ServiceDeps, 'config'>): KekRing {
  if (deps.config.provider.keks.length === 0) {
    throw new ApiError(400, 'PROVIDER_SIGNING_UNAVAILABLE', 'signing_mode: provider signing is not configured on this gateway (PROVIDER_KEKS)', {
      field: 'signing_mode',
    });
  }
  return kekRing(deps.config.provider.keks);
}

const sha256Hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * A new key for a provider identity: its public key (for the row and the key page), the sealed rows to write with
 * the identity, and the retrieval token with its expiry. The mnemonic and private key exist only inside this call.
 */
export function newIdentityKey(deps: Pick<ServiceDeps, 'config' | 'now'>, identityId: string) {
  const ring = providerRing(deps);
  const { mnemonic, privateKey, publicKey } = newProviderKey();
  const { dataKey, wrapped } = newDataKey(ring, identityId);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date((deps.now?.() ?? Date.now()) + deps.config.provider.mnemonicTtlSeconds * 1000);
  const rows = {
    identityId,
    publicKey,
    kekId: wrapped.kekId,
    wrappedDataKey: wrapped.wrapped,
    sealedKey: sealPrivateKey(dataKey, identityId, privateKey),
    tokenHash: sha256Hex(token),
    sealedMnemonic: sealMnemonic(dataKey, identityId, mnemonic),
    mnemonicExpiresAt: expiresAt,
  };
  privateKey.fill(0);
  dataKey.fill(0);
  return {
    publicKey,
    insert: (db: Db) => insertProviderKey(db, rows),
    retrieval: { url: `/v1/identity/${identityId}/mnemonic/${token}`, expires_at: expiresAt.toISOString() },
  };
}

/** The mnemonic, once; every other call (spent, expired, unknown token or identity, another organization) is one 404. */
export async function retrieveMnemonic(deps: ServiceDeps, caller: Caller, identityId: string, token: string): Promise<{ mnemonic: string; warning: string }> {
  const gone = new ApiError(404, MNEMONIC_GONE.code, MNEMONIC_GONE.message);
  // without KEKs this gateway holds nothing to retrieve
  if (!/^[A-Za-z0-9_-]{43}$/.test(token) || deps.config.provider.keks.length === 0) throw gone;
  const ring = providerRing(deps);
  const taken = await takeMnemonic(deps.database.db, caller.orgId, identityId, sha256Hex(token), new Date(deps.now?.() ?? Date.now()));
  if (!taken) throw gone;
  const dataKey = unwrapDataKey(ring, identityId, { kekId: taken.kekId, wrapped: taken.wrappedDataKey });
  try {
    const mnemonic = openMnemonic(dataKey, identityId, taken.sealedMnemonic);
    caller.log.info('provider mnemonic retrieved', { identity_id: identityId });
    return { mnemonic, warning: MNEMONIC_WARNING };
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Sign with the held key and submit; signing data gone stale between prepare and submission (the key page changed,
 * e.g. by the previous operation, within the ledger client's short cache) is refreshed and signed again, twice at most.
 */
export async function signAndSubmit<T>(
  deps: ServiceDeps,
  caller: Caller,
  input: ProviderSignInput,
  submit: (sig: ProviderSignResult) => Promise<T>,
  refresh: () => Promise<unknown>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const sig = await providerSignature(deps, caller, input);
    try {
      return await submit(sig);
    } catch (e) {
      if (attempt >= 3 || !(e instanceof ApiError) || e.code !== 'SIGNING_DATA_STALE') throw e;
      await refresh();
    }
  }
}

/** Signing with the held key outside an intent (governance, co-signatures) needs the provider:manage scope. */
export function requireProviderScope(has: boolean | undefined): void {
  if (!has) {
    throw new ApiError(
      403,
      'INSUFFICIENT_SCOPE',
      'API key lacks the required scope: provider:manage (the gateway signs with the key it holds for this identity)',
      {
        required_scopes: ['provider:manage'],
        missing_scopes: ['provider:manage'],
      },
    );
  }
}

/** A signature by the held key over what the prepared row stored (made in the worker's activity). */
export async function providerSignature(deps: ServiceDeps, caller: Caller, input: ProviderSignInput): Promise<ProviderSignResult> {
  try {
    return await runProviderSign(deps.temporal, deps.config.temporal.taskQueue, caller.orgId, input);
  } catch (err) {
    // the activity's failure (its message names no secret: which row, which key is missing)
    let cause: unknown = err;
    while ((cause as { cause?: unknown })?.cause) cause = (cause as { cause: unknown }).cause;
    caller.log.error('provider signature failed', { err, reason: (cause as Error)?.message, kind: input.kind, id: input.id });
    throw new ApiError(
      503,
      'PROVIDER_SIGNING_FAILED',
      `The gateway could not sign the ${input.kind.replace('_', ' ')} with the key it holds; retry shortly`,
      undefined,
      {
        'Retry-After': '5',
      },
    );
  }
}
