/** What the API needs, injected by the entry point (src/bin/api.ts, the devnet) or a test. */
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Logger } from '../log.js';

export interface AppDeps {
  config: Config;
  database: Database;
  temporal: Client;
  logger: Logger;
  /** clock in ms (rate-limit windows, key expiry, idempotency retention); Date.now when absent — tests fix it */
  now?: () => number;
}

/** Who is calling: set by the auth middleware on every authenticated route. */
export interface AuthContext {
  orgId: string;
  keyId: string;
  /** scopes of the key: read, write, proof:read, admin, ... */
  permissions: string[];
  isAdmin: boolean;
}

/** Hono context variables set by the middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** absent on public routes (health, docs, portal) */
    auth?: AuthContext;
  };
}
