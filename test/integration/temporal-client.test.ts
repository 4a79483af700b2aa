/**
 * The API's Temporal client runs no AsyncLocalStorage (on Node 20 one that has run keeps async hooks on for every
 * promise of the process), and what the connection passes through its call context still reaches each call: the
 * namespace of every workflow-service call and the readiness ping's deadline.
 */
import { type Connection, isGrpcDeadlineError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporalClient, pingTemporal } from '../../src/temporal/client.js';

type Client = Awaited<ReturnType<typeof connectTemporalClient>>;
type CallContext = { deadline?: number | Date; metadata?: Record<string, string> };
let client: Client;
const namespace = inject('temporalNamespace');
const connection = () => client.connection as Connection;
const storage = () => connection().callContextStorage as unknown as { enabled: boolean; getStore(): CallContext | undefined };

/** The call contexts the connection's calls read while `fn` runs. */
async function contextsSeen(fn: () => Promise<unknown>): Promise<CallContext[]> {
  const s = storage();
  const read = s.getStore;
  const seen: CallContext[] = [];
  s.getStore = () => {
    const c = read();
    if (c) seen.push(c);
    return c;
  };
  try {
    await fn().catch(() => undefined);
  } finally {
    s.getStore = read;
  }
  return seen;
}

beforeAll(async () => {
  client = await connectTemporalClient({ address: inject('temporalAddress'), namespace });
});
afterAll(async () => {
  await client?.connection.close();
});

describe('the Temporal client and async hooks', () => {
  it('connecting, a workflow-service call and a ping leave the call-context storage unused', async () => {
    expect(storage().enabled).toBe(false);
    await client.workflowService.describeNamespace({ namespace });
    await pingTemporal(client);
    expect(storage().enabled).toBe(false);
  });

  it('a workflow-service call carries its namespace', async () => {
    const seen = await contextsSeen(() => client.workflowService.describeNamespace({ namespace }));
    expect(seen.map((c) => c.metadata?.['temporal-namespace'])).toContain(namespace);
  });

  it("the ping's deadline reaches its call, and applies", async () => {
    const seen = await contextsSeen(() => pingTemporal(client));
    expect(seen.some((c) => typeof c.deadline === 'number' && c.metadata?.['temporal-namespace'] === namespace)).toBe(true);
    const err = await pingTemporal(client, -1000).catch((e: unknown) => e);
    expect(isGrpcDeadlineError(err)).toBe(true);
  });

  it('a scope ends with its function, also when that throws', () => {
    const s = connection().callContextStorage;
    expect(() =>
      s.run({ deadline: 1 }, () => {
        expect(s.getStore()).toEqual({ deadline: 1 });
        throw new Error('x');
      }),
    ).toThrow('x');
    expect(s.getStore()).toBeUndefined();
  });
});
