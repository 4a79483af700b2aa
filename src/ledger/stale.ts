/**
 * Stale signing data: a signature the ledger refuses because what it was prepared against has moved on. The
 * ledger requires each key's signature timestamps to grow, so a signature prepared before another one the key has
 * since made is refused (badTimestamp, "invalid timestamp: have X, got Y"); and a signature names the signer's
 * key page version, so one prepared before the page changed is refused (badSignerVersion). Neither is the
 * client's fault nor fixed by sending the same signature again: fresh signing data (a new timestamp, the current
 * version) for the same transaction or intent is.
 */
import { LedgerError } from './errors.js';

/** Why signing data is stale: the key's timestamp moved on, or the signer's key page version changed. */
export type StaleSigningCause = 'timestamp' | 'key_page_version';
export const STALE_SIGNING_CAUSES: readonly StaleSigningCause[] = ['timestamp', 'key_page_version'];

/** The cause a ledger refusal names, or undefined when the refusal is about something else. */
export function staleSigningCause(e: unknown): StaleSigningCause | undefined {
  if (!(e instanceof LedgerError)) return undefined;
  if (e.code === 'badTimestamp') return 'timestamp';
  if (e.code === 'badSignerVersion') return 'key_page_version';
  return staleCauseOfMessage(e.message);
}

/** The cause a refusal's text names (a node that labels the refusal with a generic code still words it so). */
export function staleCauseOfMessage(message: string): StaleSigningCause | undefined {
  if (/invalid timestamp|initial signature does not have a timestamp/i.test(message)) return 'timestamp';
  if (/invalid (signer )?version|badSignerVersion/i.test(message)) return 'key_page_version';
  if (/badTimestamp/i.test(message)) return 'timestamp';
  return undefined;
}
