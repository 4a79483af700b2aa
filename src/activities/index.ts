/** Every activity the worker registers, built from injected dependencies. */
import type { WebhookSettings } from '../config.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../log.js';
import { createStoreActivities } from './store.js';
import { createWebhookActivities } from './webhooks.js';

export interface ActivityDeps {
  db: Db;
  /** retry schedule, disable threshold, timeouts (config.webhooks); production defaults when absent */
  webhooks?: WebhookSettings;
  logger?: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createStoreActivities(deps.db),
    ...createWebhookActivities(deps.db, deps.webhooks, deps.logger),
  };
}
export type Activities = ReturnType<typeof createActivities>;
