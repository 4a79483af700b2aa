/**
 * The intent and its ledger transaction: the intent parses and recomputes, the transaction re-hashes and is the
 * intent's WriteData on the identity's data account, every signature verifies, the key page's signatures meet the
 * stated threshold and version, and the Merkle receipt folds from the transaction hash to its anchor.
 */
import { core } from 'accumulate.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { canonicalJson } from '../../chain/formulas.js';
import { publicKeyHash, unwrapSignature, verifySignature } from '../../ledger/signing.js';
import { INTENT_MEMO, parseIntentEntries, type CanonicalIntent } from '../../protocol/intent/index.js';
import { CheckFailed, ensure, eq, int, lc, ledger0x, same, type VerifyContext } from './checks.js';
import { checkLedgerReceipt, ledgerWriteData } from './evidence.js';

/** A ledger signature's signing key: its page, public key, page version, delegation path and vote. */
export interface LedgerSignerKey {
  signer: string;
  publicKey: string;
  version: number;
  delegators: string[];
  vote: unknown;
}

/**
 * The bundle's ledger signatures, each decoded and verified over the transaction hash: their signing keys. Throws
 * CheckFailed naming the first that is missing, repeated, undecodable or invalid.
 */
export function verifiedSignatureKeys(signatures: unknown[], txHash: string): LedgerSignerKey[] {
  ensure(Array.isArray(signatures) && signatures.length > 0, 'no signatures');
  const texts = signatures.map((x) => canonicalJson(x));
  ensure(new Set(texts).size === texts.length, 'a signature is listed twice');
  const h = hexToBytes(ledger0x(txHash));
  return signatures.map((raw, i) => {
    let sig: core.Signature;
    try {
      sig = core.Signature.fromObject(raw as core.SignatureArgs);
    } catch (e) {
      throw new CheckFailed(`signature ${i}: cannot decode: ${(e as Error).message}`);
    }
    const v = verifySignature(sig, h);
    ensure(v.ok, `signature ${i}: ${v.ok ? '' : v.reason}`);
    const { key, delegators } = unwrapSignature(sig);
    return { signer: key.signer!.toString(), publicKey: bytesToHex(key.publicKey!), version: Number(key.signerVersion), delegators, vote: key.vote };
  });
}

/** Runs the intent and ledger checks; sets ctx.intent when the intent parses. */
export function verifyIntentAndLedger(ctx: VerifyContext): void {
  const { b, check } = ctx;
  let intent: CanonicalIntent | undefined;
  check('intent.parts', () => {
    ensure(b.intent && Array.isArray(b.intent.parts), 'intent.parts missing');
    intent = parseIntentEntries(b.intent.parts);
    eq(intent.operationId, b.intent.operation_id, 'operation id');
    ensure(intent.intentId === b.intent.intent_id, `intent id ${intent.intentId} != ${b.intent.intent_id}`);
    ensure(intent.adiUrl === b.intent.adi_url, `ADI ${intent.adiUrl} != ${b.intent.adi_url}`);
    return `intent ${intent.intentId}, operation ${intent.operationId}, ${intent.legs.length} leg(s)`;
  });
  const L = b.ledger;
  let ledgerTxHashOk = false;
  check('ledger.transaction', () => {
    ensure(L, 'ledger section missing');
    const w = ledgerWriteData(L.transaction, L.tx_hash, L.tx_id, 'intent transaction');
    ledgerTxHashOk = true;
    ensure(w.memo === INTENT_MEMO, `memo ${JSON.stringify(w.memo)} is not ${INTENT_MEMO}`);
    ensure(w.parts.length === b.intent.parts.length && w.parts.every((p, i) => p === b.intent.parts[i]), 'the WriteData entry is not exactly the intent parts');
    ensure(same(w.principal, b.intent.data_account), `written to ${w.principal}, not the data account ${b.intent.data_account}`);
    const rest = lc(w.principal).startsWith(`${lc(b.intent.adi_url)}/`) ? lc(w.principal).slice(b.intent.adi_url.length + 1) : '';
    // a direct account of the identity, as the validators require (one under a sub-identity may be another party's)
    ensure(rest && !rest.includes('/'), `data account ${w.principal} is not a direct account of ${b.intent.adi_url}`);
    return `${L.tx_hash} re-hashes; WriteData of the 4 intent parts to ${w.principal}`;
  });
  let validKeys: LedgerSignerKey[] = [];
  check('ledger.signatures', () => {
    ensure(ledgerTxHashOk, 'not checked: the transaction hash did not recompute');
    validKeys = verifiedSignatureKeys(L.signatures, L.tx_hash);
    return `${validKeys.length} Ed25519 signature(s) verify over the transaction`;
  });
  check('ledger.authority', () => {
    const a = L.authority;
    ensure(a && intent, 'not checked: authority or intent missing');
    ensure(same(a.key_book, intent.keyBook), `key book ${a.key_book} is not the intent's ${intent.keyBook}`);
    ensure(lc(a.key_page).startsWith(`${lc(a.key_book)}/`), `key page ${a.key_page} is not a page of ${a.key_book}`);
    const threshold = int(a.threshold, 'authority.threshold');
    const version = int(a.key_page_version, 'authority.key_page_version');
    ensure(threshold >= 1, 'threshold must be at least 1');
    const accept = (v: unknown) => v === undefined || v === core.VoteType.Accept;
    const direct = validKeys.filter((k) => accept(k.vote) && !k.delegators.length && same(k.signer, a.key_page));
    for (const k of direct) ensure(k.version === version, `signature of ${k.publicKey} is for page version ${k.version}, not ${version}`);
    const delegated = validKeys.filter((k) => accept(k.vote) && k.delegators.length === 1 && same(k.delegators[0], a.key_page));
    // a delegate book votes once, however many of its keys signed (as the ledger and the validators count it)
    const books = new Set(delegated.map((k) => lc(k.signer).replace(/\/\d+$/, ''))).size;
    const counted = new Set(direct.map((k) => k.publicKey)).size + books;
    ensure(counted >= threshold, `${counted} valid signature(s) from ${a.key_page}, threshold ${threshold}`);
    // the validators' count (stated) checks page membership on the ledger, so it can be lower than the bundle's
    // signatures allow, never higher
    const stated = int(a.signatures, 'authority.signatures');
    ensure(stated >= threshold, `stated signatures ${a.signatures} below threshold ${threshold}`);
    ensure(stated <= counted, `stated signatures ${a.signatures} exceed the ${counted} the bundle's signatures can count`);
    const statedDelegated = int(a.delegated, 'authority.delegated');
    ensure(statedDelegated <= books && statedDelegated <= stated, `stated delegated votes ${a.delegated} exceed the ${books} delegate book(s) that signed`);
    return `${counted} signature(s) on ${a.key_page} v${version} meet threshold ${threshold}`;
  });
  check('ledger.key_page', () => {
    const a = L.authority;
    const p = L.key_page;
    ensure(a && p && Array.isArray(p.key_hashes) && Array.isArray(p.delegates), 'not checked: authority or key_page missing');
    ensure(same(p.url, a.key_page), `key page ${p.url} is not the authority's ${a.key_page}`);
    const version = int(a.key_page_version, 'authority.key_page_version');
    const now = int(p.version, 'key_page.version');
    // the page as read at assembly; if it changed after the signatures, its key list is not the one they met.
    // A page's version only grows: one read before the signatures' version is not the page they were counted on.
    ensure(now >= version, `key page read at version ${now}, before the version ${version} the signatures were counted at`);
    if (now !== version) return `page is at version ${now}, the signatures were counted at version ${version}: membership not checked offline`;
    ensure(
      int(p.accept_threshold, 'key_page.accept_threshold') === int(a.threshold, 'authority.threshold'),
      `page threshold ${p.accept_threshold} != stated ${a.threshold}`,
    );
    const accept = (v: unknown) => v === undefined || v === core.VoteType.Accept;
    let direct = 0;
    let delegated = 0;
    for (const k of validKeys.filter((x) => accept(x.vote))) {
      if (!k.delegators.length && same(k.signer, a.key_page)) {
        const h = bytesToHex(publicKeyHash(hexToBytes(k.publicKey as Hex)));
        ensure(
          p.key_hashes.some((x) => same(ledger0x(x), h)),
          `signer key ${k.publicKey} (hash ${h}) is not a key of ${p.url} v${now}`,
        );
        direct++;
      } else if (k.delegators.length === 1 && same(k.delegators[0], a.key_page)) {
        const book = lc(k.signer).replace(/\/\d+$/, '');
        ensure(
          p.delegates.some((x) => lc(x) === book),
          `delegate book ${book} is not listed on ${p.url} v${now}`,
        );
        delegated++;
      }
    }
    return `${direct} signer key(s)${delegated ? ` and ${delegated} delegated signature(s)` : ''} on ${p.url} v${now} (threshold ${p.accept_threshold})`;
  });
  check('ledger.receipt', () => checkLedgerReceipt(L.receipt, L.tx_hash, b.intent.data_account, 'intent receipt'));
  ctx.intent = intent;
}
