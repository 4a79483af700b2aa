/** What the use cases need, injected by the entry point (src/bin/api.ts, the devnet) or a test through the app. */
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { createLedgerClient, SIGNER_PAGE_CACHE_MS, type LedgerClient } from '../ledger/index.js';
import type { Logger } from '../log.js';

export interface ServiceDeps {
  config: Config;
  database: Database;
  temporal: Client;
  /** the API's ledger client (built by apiLedgerClient) */
  ledger: LedgerClient;
  /** clock in ms (rate-limit windows, key expiry, idempotency retention, claims); Date.now when absent — tests fix it */
  now?: () => number;
}

/** Who asks: the caller's organization and the request's logger. */
export interface Caller {
  orgId: string;
  log: Logger;
}

/** A request should fail fast with 502 when the ledger does not answer, not hang. */
export const API_LEDGER_TIMEOUT_MS = 5000;

/** The API's one ledger client: its recentKeyPage answers from key-page reads at most 2 s old (src/ledger/page-cache.ts). */
export function apiLedgerClient(config: Pick<Config, 'ledgerUrl'>): LedgerClient {
  return createLedgerClient({ url: config.ledgerUrl, timeoutMs: API_LEDGER_TIMEOUT_MS, signerCacheMs: SIGNER_PAGE_CACHE_MS });
}
