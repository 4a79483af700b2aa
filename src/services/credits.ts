/**
 * Credits after creation, the use case behind POST /v1/identity/{id}/credits: ledger credits for the identity's
 * page 1 or another page of its book (one made by create_key_page), bought from the organization's credit grant
 * through the gateway sponsor.
 *
 *   1. the identity (active) and the page (within its book, a key page on the ledger) are checked;
 *   2. the credits are charged to the grant atomically (402 CREDIT_GRANT_EXCEEDED naming what remains);
 *   3. `credits-<purchase id>` starts (the charge given back when it did not start) and buys them: the AddCredits
 *      exactly once, then the deposit; a purchase that fails for good is refunded by the workflow;
 *   4. the answer waits for the result a short while: the page's new live balance (200), or 202 when it takes
 *      longer; the purchase then finishes on its own, and GET /v1/identity/{id} shows page 1's balance.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { chargeCreditGrant, returnCreditGrant } from '../db/credits.js';
import { UUID } from '../db/ids.js';
import { getOrgIdentity, type IdentityRow } from '../db/identities.js';
import { isNotFound, LedgerTransportError, normUrl } from '../ledger/index.js';
import { creditsResult, creditsWorkflowId, startCreditsWorkflow } from '../temporal/credits.js';
import type { Caller, ServiceDeps } from './deps.js';
import { ApiError } from './errors.js';
import { requireActive } from './identity-access.js';

export interface BuyCreditsRequest {
  credits: number;
  key_page_url?: string;
}

export type CreditPurchase =
  | { done: true; purchaseId: string; identity: IdentityRow; keyPageUrl: string; credits: number; creditBalance: number; txHash: string }
  | { done: false; purchaseId: string; identity: IdentityRow; keyPageUrl: string; credits: number };

/** How long the request waits for the purchase before answering 202 (a devnet block is tens of ms, a real one ~1 s). */
export const CREDITS_WAIT_MS = 20_000;

/** The page the credits go to: page 1 by default, else a key page of the identity's book (400 naming the field). */
async function targetPage(deps: ServiceDeps, identity: IdentityRow, given: string | undefined): Promise<string> {
  if (given === undefined) return identity.keyPageUrl;
  const field = 'key_page_url';
  let url: string;
  try {
    url = normUrl(given, field);
  } catch {
    throw new ApiError(400, 'VALIDATION_ERROR', `${field}: not an Accumulate URL`, { field });
  }
  const book = normUrl(identity.bookUrl);
  if (!url.startsWith(`${book}/`)) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be a key page of ${book}, the identity's book`, { field });
  let type: string;
  try {
    type = (await deps.ledger.queryAccount(url)).type;
  } catch (e) {
    if (isNotFound(e)) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: ${url} does not exist`, { field });
    if (e instanceof LedgerTransportError) throw new ApiError(502, 'LEDGER_UNAVAILABLE', 'The ledger could not be reached; retry shortly');
    throw e;
  }
  if (type !== 'keyPage') throw new ApiError(400, 'VALIDATION_ERROR', `${field}: ${url} is a ${type}, not a key page`, { field });
  return url;
}

function wholeCredits(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw new ApiError(400, 'VALIDATION_ERROR', 'credits: must be an integer of at least 1', { field: 'credits' });
  return v;
}

/** A purchase's failure → the API error (the workflow has refunded the grant when the ledger never took the credits). */
function purchaseError(err: WorkflowFailedError): ApiError {
  const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
  const message = cause?.message ?? err.message;
  if (cause?.type === 'SponsorOutOfFunds' || cause?.type === 'SponsorOutOfCredits')
    return new ApiError(
      503,
      'SERVICE_UNAVAILABLE',
      `The gateway sponsor cannot pay for the credits now (they were given back to the grant): ${message}`,
      undefined,
      {
        'Retry-After': '60',
      },
    );
  return new ApiError(502, 'LEDGER_UNAVAILABLE', `The credits could not be bought: ${message}`);
}

/** Buy `credits` for a key page of the identity `identityId` (path parameter) of the caller's organization. */
export async function buyIdentityCredits(deps: ServiceDeps, caller: Caller, identityId: string, body: BuyCreditsRequest): Promise<CreditPurchase> {
  const db = deps.database.db;
  // a path id that is not a UUID names no identity: the same 404 as one of no identity
  const identity = UUID.test(identityId) ? await getOrgIdentity(db, caller.orgId, identityId) : undefined;
  if (!identity) throw new ApiError(404, 'IDENTITY_NOT_FOUND', 'Identity not found');
  const credits = wholeCredits(body.credits);
  requireActive(identity);
  const keyPageUrl = await targetPage(deps, identity, body.key_page_url);

  const charge = await chargeCreditGrant(db, caller.orgId, BigInt(credits));
  if (!charge.ok) {
    throw new ApiError(402, 'CREDIT_GRANT_EXCEEDED', `credits: ${credits} requested but only ${charge.remaining} remain in the organization's credit grant`, {
      field: 'credits',
      requested: credits,
      remaining: Number(charge.remaining),
    });
  }
  const purchaseId = randomUUID();
  await startCreditsWorkflow(
    deps.temporal,
    deps.config.temporal.taskQueue,
    { purchaseId, orgId: caller.orgId, identityId: identity.id, identityKeyPageUrl: identity.keyPageUrl, keyPageUrl, credits: String(credits) },
    async (err) => {
      caller.log.error('credits workflow could not be started', { err, identity_id: identity.id, purchase_id: purchaseId });
      await returnCreditGrant(db, caller.orgId, BigInt(credits));
      throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'The credits could not be bought now; retry shortly', undefined, { 'Retry-After': '5' });
    },
  );
  caller.log.info('credits purchase started', { identity_id: identity.id, purchase_id: purchaseId, workflow_id: creditsWorkflowId(purchaseId), credits });
  let result: Awaited<ReturnType<typeof creditsResult>>;
  try {
    result = await creditsResult(deps.temporal, purchaseId, CREDITS_WAIT_MS);
  } catch (err) {
    if (err instanceof WorkflowFailedError) throw purchaseError(err);
    throw err;
  }
  if (!result) return { done: false, purchaseId, identity, keyPageUrl, credits };
  const txHash = result.txId.replace(/^acc:\/\//, '').split('@')[0]!;
  return { done: true, purchaseId, identity, keyPageUrl, credits, creditBalance: result.creditBalance, txHash };
}
