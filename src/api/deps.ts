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
}

/** Hono context variables set by the middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
  };
}
