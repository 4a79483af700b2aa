/**
 * The ledger token transfer intent `{ type: "sendTokens", to, amount }` (prepare; the signature and the rest go
 * as for every intent: the Update on `intent-<id>`, then the workflow follows the ledger transaction and, with
 * no chain leg, stores the ledger's receipt as the proof).
 *
 *   from     the identity's ACME token account acc://<adi>/tokens, made by provisioning. An identity provisioned
 *            before token accounts has none: the gateway cannot create it for the identity (only the identity's
 *            own key may, once provisioning handed the key page over), so its sendTokens answers 409
 *            NO_TOKEN_ACCOUNT naming the account and the governance operation that creates it
 *            (create_token_account, signed by the identity's key).
 *   to       an ACME token account: an ADI's token account that exists, or a lite token account
 *            (acc://<lite identity>/ACME, which the ledger creates on its first deposit). Anything else: 400
 *            naming intent.to.
 *   amount   ACME (number, or decimal string), at most 8 decimal places (src/protocol/intent/transfer.ts); the
 *            sending account's balance is read at prepare: short of the amount → 402 INSUFFICIENT_BALANCE naming
 *            intent.amount with the balance. A balance spent between prepare and delivery makes the ledger refuse
 *            the transfer, and the intent fails with the ledger's reason.
 */
import { createHash } from 'node:crypto';
import type { IdentityRow } from '../db/identities.js';
import { insertIntent, storedSigning, type IntentRow } from '../db/intents.js';
import type { SigningData } from '../db/schema.js';
import {
  isLiteAuthority,
  LedgerInputError,
  LedgerTransportError,
  liteAuthorityValid,
  isValidAdiRoot,
  normUrl,
  tx,
  type PreparedSignature,
} from '../ledger/index.js';
import { canonicalJson } from '../chain/formulas.js';
import { IntentRequestError } from '../protocol/intent/request.js';
import { formatAcme, identityTokenAccount, SEND_TOKENS, transferFromRequest, type TransferDocument } from '../protocol/intent/transfer.js';
import type { Caller, ServiceDeps } from './deps.js';
import { ApiError } from './errors.js';

const isAcmeToken = (u: unknown) => typeof u === 'string' && u.toLowerCase() === 'acc://acme';

function ledgerDown(e: unknown): never {
  if (e instanceof LedgerTransportError) throw new ApiError(502, 'LEDGER_UNAVAILABLE', 'The ledger could not be reached; retry shortly');
  throw e;
}

/** The recipient: an ACME token account on the ledger (an ADI's that exists, or a lite one); 400 naming intent.to otherwise. */
async function recipient(deps: ServiceDeps, raw: unknown, from: string): Promise<string> {
  const bad = (why: string) => new ApiError(400, 'VALIDATION_ERROR', `intent.to: ${why}`, { field: 'intent.to' });
  let to: string;
  try {
    to = normUrl(raw as string, 'intent.to');
  } catch (e) {
    if (e instanceof LedgerInputError) throw bad(`${e.message.replace(/^intent\.to: /, '')}; expected a ledger token account URL (e.g. acc://bob.acme/tokens)`);
    throw e;
  }
  const [authority, ...path] = to.slice('acc://'.length).split('/');
  const lite = isLiteAuthority(authority!);
  if (lite ? !liteAuthorityValid(authority!) || path.join('/') !== 'acme' : !isValidAdiRoot(authority!) || path.length === 0) {
    throw bad(`${to} is not a token account URL: acc://<name>.acme/<account> or a lite token account acc://<lite identity>/ACME`);
  }
  if (to === from.toLowerCase()) throw bad(`${to} is the identity's own token account`);
  const acct = await deps.ledger.tryQueryAccount(to).catch(ledgerDown);
  if (!acct) {
    // the ledger makes a lite token account on its first deposit; an ADI's account must exist, or the deposit bounces
    if (lite) return to;
    throw bad(`${to} does not exist on the ledger`);
  }
  if ((acct.type !== 'tokenAccount' && acct.type !== 'liteTokenAccount') || !isAcmeToken(acct.raw.tokenUrl)) {
    throw bad(`${to} is a ${acct.type}, not an ACME token account`);
  }
  return to;
}

/** Prepare a sendTokens intent for the nominated seat: 201 material; its signature starts `intent-<id>` (ledger-only). */
export async function prepareTransferIntent(
  deps: ServiceDeps,
  caller: Caller,
  body: { intent: unknown },
  identity: IdentityRow,
  seat: { signerKey: string; signerPage: string },
  ids: { intentId: string; createdAt: number; expiresAt: number },
): Promise<{ row: IntentRow; signingData: SigningData; operationId: string }> {
  const db = deps.database.db;
  let req: ReturnType<typeof transferFromRequest>;
  try {
    req = transferFromRequest(body.intent);
  } catch (e) {
    if (e instanceof IntentRequestError) throw new ApiError(400, e.code, e.message, { field: e.field, ...e.details });
    throw e;
  }
  const from = identityTokenAccount(identity.adiUrl);
  const to = await recipient(deps, req.to, from);
  const account = await deps.ledger.tryQueryAccount(from).catch(ledgerDown);
  if (!account) {
    throw new ApiError(
      409,
      'NO_TOKEN_ACCOUNT',
      `The identity has no ledger token account ${from} (it was provisioned before identities got one): create it with the governance operation create_token_account (POST /v1/governance with operations [{"type": "create_token_account"}], signed with the identity's key like every governance operation), fund it, then send again`,
      { token_account: from, operation: 'create_token_account' },
    );
  }
  const balance = BigInt(account.balance ?? '0');
  if (balance < req.amount) {
    throw new ApiError(402, 'INSUFFICIENT_BALANCE', `intent.amount: ${req.amountAcme} ACME is more than the balance of ${from}: ${formatAcme(balance)} ACME`, {
      field: 'intent.amount',
      token_account: from,
      balance: formatAcme(balance),
      balance_base_units: balance.toString(),
      amount: req.amountAcme,
    });
  }

  let prepared: PreparedSignature;
  let credits: number;
  try {
    credits = (await deps.ledger.queryKeyPage(seat.signerPage)).creditBalance;
    prepared = await deps.ledger.prepareExternalSignature({
      principal: from,
      body: tx.sendTokens([{ url: to, amount: req.amount }]),
      txOptions: { expireAt: new Date(ids.expiresAt * 1000) },
      signerUrl: seat.signerPage,
      publicKey: seat.signerKey,
    });
  } catch (e) {
    if (e instanceof LedgerInputError) {
      const field = e.field === 'publicKey' ? 'signer_public_key' : e.field === 'signerUrl' ? 'signer_key_page' : e.field;
      throw new ApiError(400, 'SIGNER_NOT_ON_PAGE', `${field}: ${e.message.replace(/^[a-zA-Z]+: /, '')}`, { field });
    }
    if ((e as { code?: string }).code === 'notFound')
      throw new ApiError(400, 'VALIDATION_ERROR', `signer_key_page: ${seat.signerPage} does not exist`, { field: 'signer_key_page' });
    return ledgerDown(e);
  }
  if (credits <= 0) {
    throw new ApiError(
      402,
      'INSUFFICIENT_CREDITS',
      `The key page ${seat.signerPage} has no credits: the ledger would refuse the transfer; add credits first: POST /v1/identity/${identity.id}/credits`,
      { key_page: seat.signerPage },
    );
  }

  const doc: TransferDocument = { type: SEND_TOKENS, from, to, amount: req.amount.toString(), amount_acme: req.amountAcme };
  // what the intent is, hashed: the operation id of a transfer (a cross-chain intent's is its canonical intent's)
  const operationId = `0x${createHash('sha256')
    .update(canonicalJson({ ...doc, intent_id: ids.intentId, adi_url: identity.adiUrl, created_at: ids.createdAt }))
    .digest('hex')}`;
  const { prepared: preparedTx, signingData } = storedSigning(
    ids.intentId,
    { principal: from, memo: '', expireAt: new Date(ids.expiresAt * 1000).toISOString(), publicKey: seat.signerKey },
    prepared,
  );
  const row = await insertIntent(db, {
    id: ids.intentId,
    orgId: caller.orgId,
    identityId: identity.id,
    intentType: SEND_TOKENS,
    intent: doc,
    operationId,
    signingData,
    prepared: preparedTx,
    signerPublicKey: seat.signerKey,
    signerKeyPage: prepared.signerUrl,
    expiresAt: new Date(ids.expiresAt * 1000),
    signingMode: 'external',
  });
  caller.log.info('token transfer intent prepared', { intent_id: ids.intentId });
  return { row, signingData, operationId };
}
