/** List cursors are opaque: anything the gateway did not write is a 400 naming `cursor`, never a 500 from the database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/api/pagination.js';
import { dbKinds } from '../support/env.js';
import { createTestOrgAndKey, startTestApp, type TestApp, type TestKey } from '../support/platform.js';

const mk = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const ZERO = '00000000-0000-0000-0000-000000000000';

describe.each(dbKinds())('list cursors (%s)', (kind) => {
  let t: TestApp;
  let k: TestKey;
  beforeAll(async () => {
    t = await startTestApp(kind);
    k = await createTestOrgAndKey(t.db, { rateLimitRpm: 1000, isAdmin: true });
  });
  afterAll(async () => t?.close());

  const tampered: [string, string][] = [
    ['year -100000', mk({ t: '-100000-01-01T00:00:00.000Z', id: ZERO })],
    ['year +275760', mk({ t: '+275760-09-13T00:00:00.000Z', id: ZERO })],
    ['year 1969', mk({ t: '1969-12-31T23:59:59.999Z', id: ZERO })],
    ['36 dashes', mk({ t: '2020-01-01T00:00:00.000Z', id: '-'.repeat(36) })],
    ['36 letters', mk({ t: '2020-01-01T00:00:00.000Z', id: 'a'.repeat(36) })],
    ['not ISO', mk({ t: 'Wed Jan 01 2020', id: ZERO })],
    ['impossible date', mk({ t: '2020-02-31T00:00:00.000Z', id: ZERO })],
    ['number t', mk({ t: 0, id: ZERO })],
    ['null t', mk({ t: null, id: ZERO })],
    ['garbage', 'not-base64-json'],
  ];

  for (const path of ['/v1/identities', '/v1/transactions', '/v1/pending', '/v1/webhooks/endpoints', '/v1/webhooks/deliveries', '/v1/admin/api-keys']) {
    it(`${path}: a tampered cursor is a 400 naming cursor`, async () => {
      for (const [what, cursor] of tampered) {
        const res = await t.call(`${path}?cursor=${cursor}`, { key: k.key });
        expect(res.status, what).toBe(400);
        expect(await res.json(), what).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/^cursor: /) });
      }
      const good = encodeCursor({ createdAt: new Date('2020-01-01T00:00:00Z'), id: '0b9a3c55-8f0c-4d51-9f7e-2b1b4c0e6a10' });
      expect((await t.call(`${path}?cursor=${good}`, { key: k.key })).status).toBe(200);
    });
  }

  it('/v1/events: a cursor is an event id; anything else is a 400 naming cursor', async () => {
    for (const cursor of ['not-an-id', tampered[0]![1]]) {
      const res = await t.call(`/v1/events?cursor=${cursor}`, { key: k.key });
      expect(res.status, cursor).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'cursor' } });
    }
  });
});
