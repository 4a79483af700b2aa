/** What the API needs, injected by the entry point (src/bin/api.ts, the devnet) or a test. */
import type { Logger } from '../log.js';
import type { ServiceDeps } from '../services/deps.js';

export interface AppDeps extends ServiceDeps {
  logger: Logger;
}

/** What createApp takes: without a ledger client, it builds the API's own from config.ledgerUrl. */
export type AppDepsInput = Omit<AppDeps, 'ledger'> & Partial<Pick<AppDeps, 'ledger'>>;

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
    /** set when no route serves the request (./middleware/routing.ts): `allow` lists a known path's methods */
    routeMiss?: { allow?: string[] };
  };
}
