/** The API's one Temporal client. */
import { Client, Connection } from '@temporalio/client';

export async function connectTemporalClient(opts: { address: string; namespace: string }): Promise<Client> {
  const connection = await Connection.connect({ address: opts.address, connectTimeout: '5s' });
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
