/** Every activity the worker registers, built from injected dependencies. */
import type { Db } from '../db/client.js';
import { createStoreActivities } from './store.js';

export interface ActivityDeps {
  db: Db;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createStoreActivities(deps.db),
  };
}
export type Activities = ReturnType<typeof createActivities>;
