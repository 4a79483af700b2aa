/** The API's one Temporal client. */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { Client, Connection } from '@temporalio/client';

/**
 * A connection passes a call's deadline and metadata (every call of the workflow service carries its namespace that
 * way) through an AsyncLocalStorage, read when the call is made. On Node 20 the first `run` of any such storage turns
 * on async hooks for every promise of the process for good: an `await` costs about 2.5 × as much, and a request of
 * the API makes dozens. The client's own uses reach the call synchronously (the namespace wrapper, connecting, and
 * pingTemporal below), so the storage is given a plain synchronous scope instead: what `run` sets is seen by the
 * calls made before `fn` first awaits. A deadline set around code that awaits before its call
 * (`withDeadline(d, () => client.workflow.start(...))`) would not reach it; nothing here does that.
 */
function synchronousScope<T>(storage: AsyncLocalStorage<T>): void {
  let current: T | undefined;
  storage.run = <R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R => {
    const outer = current;
    current = store;
    try {
      return fn(...args);
    } finally {
      current = outer;
    }
  };
  storage.getStore = () => current;
}

export async function connectTemporalClient(opts: { address: string; namespace: string }): Promise<Client> {
  const connection = Connection.lazy({ address: opts.address, connectTimeout: '5s' });
  synchronousScope(connection.callContextStorage);
  await connection.ensureConnected();
  return new Client({ connection, namespace: opts.namespace });
}

/**
 * Cheap check of the Temporal frontend through an existing client: it answers, and knows the client's namespace
 * (a frontend that answers but lacks the namespace refuses every workflow start).
 */
export async function pingTemporal(client: Client, timeoutMs = 2000): Promise<void> {
  await client.connection.withDeadline(Date.now() + timeoutMs, () =>
    client.connection.workflowService.describeNamespace({ namespace: client.options.namespace }),
  );
}
