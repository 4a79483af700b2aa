/**
 * The API conventions (docs/api-conventions.md) over the OpenAPI document the running app serves and over the event
 * catalogue: one pagination schema and one set of list parameters, numbers declared as numbers, one name per concept,
 * create responses carrying their resource's id at the top level. The same rules over live answers are checked by
 * the Certen client's end-to-end test (test/e2e/certen-client.test.ts).
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SCHEMAS } from '../../src/webhooks/catalogue.js';
import { answerDeviations, PAGINATION_KEYS, schemaDeviations } from '../support/conventions.js';
import { startTestApp, type TestApp } from '../support/platform.js';

type Schema = Record<string, any>;
type Operation = { parameters?: { name: string; in: string }[]; responses: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

const LISTS = [
  '/v1/identities',
  '/v1/transactions',
  '/v1/portfolio',
  '/v1/pending',
  '/v1/events',
  '/v1/webhooks/endpoints',
  '/v1/webhooks/deliveries',
  '/v1/admin/api-keys',
];
const CREATES = ['/v1/identity', '/v1/transaction', '/v1/governance', '/v1/sign', '/v1/webhooks/endpoints', '/v1/admin/api-keys'];
/** the contract's names of a created resource's id where it is not `id` */
const ID_FIELDS = ['id', 'intent_id', 'governance_op_id', 'sign_request_id'];

describe('API conventions over /docs/json and the event catalogue', () => {
  let t: TestApp;
  let doc: Doc;
  const resolve = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];
  /** a schema with its $ref followed and the properties of an allOf merged into it */
  const deref = (s: Schema | undefined): Schema => {
    if (s?.$ref) return deref(resolve(s.$ref));
    if (!s?.allOf) return s ?? {};
    const parts = (s.allOf as Schema[]).map(deref);
    return { ...s, properties: Object.assign({}, ...parts.map((x) => x.properties), s.properties) };
  };
  const jsonOf = (op: Operation, status: string) => deref(op.responses[status]?.content?.['application/json']?.schema);

  beforeAll(async () => {
    t = await startTestApp('pglite');
    doc = await (await t.call('/docs/json')).json();
  });
  afterAll(async () => t?.close());

  it('every list takes limit, cursor and offset and answers the one pagination object', () => {
    const lists = Object.entries(doc.paths)
      .filter(([, ops]) => ops.get && 'pagination' in (jsonOf(ops.get, '200').properties ?? {}))
      .map(([p]) => p);
    expect(lists.sort()).toEqual([...LISTS].sort());
    const paginations = LISTS.map((p) => deref(jsonOf(doc.paths[p]!.get!, '200').properties.pagination));
    for (const [i, p] of paginations.entries()) {
      expect(Object.keys(p.properties).sort(), LISTS[i]).toEqual(PAGINATION_KEYS);
      expect(p, `${LISTS[i]} pagination differs from ${LISTS[0]}'s`).toEqual(paginations[0]);
      const query = (doc.paths[LISTS[i]!]!.get!.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name);
      expect(query, LISTS[i]).toEqual(expect.arrayContaining(['limit', 'cursor', 'offset']));
    }
  });

  it('every answer schema declares numbers as numbers and uses one name per concept', () => {
    const problems = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).flatMap(([m, op]) =>
        Object.keys(op.responses)
          .filter((s) => s.startsWith('2'))
          .flatMap((s) => schemaDeviations(jsonOf(op, s), resolve, `${m.toUpperCase()} ${p} ${s}`)),
      ),
    );
    expect(problems).toEqual([]);
  });

  it("every event type's data schema follows the same rules", () => {
    const problems = Object.entries(EVENT_SCHEMAS).flatMap(([type, schema]) =>
      schemaDeviations(z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }), () => ({}), type),
    );
    expect(problems).toEqual([]);
  });

  it("a create answer carries its resource's id at the top level", () => {
    for (const p of CREATES) {
      const op = doc.paths[p]!.post!;
      const status = ['201', '202', '200'].find((s) => op.responses[s])!;
      const props = Object.keys(jsonOf(op, status).properties ?? {});
      expect(
        props.some((k) => ID_FIELDS.includes(k)),
        `POST ${p} ${status} has no top-level id (${props.join(', ')})`,
      ).toBe(true);
    }
  });

  it('the answer checks find each kind of deviation (they can fail)', () => {
    const bad = {
      intent_id: 'x',
      tx_hash: `0x${'AB'.repeat(32)}`,
      key_page_version: '3',
      governance_id: 'g',
      chain_accounts: [{ chain: 'polygon-amoy', chain_id: 80002, evm_chain_id: 80002, deployment_tx: 'ab'.repeat(32) }],
      pagination: { limit: 1, has_more: false },
      keyBook: 'x',
    };
    expect(answerDeviations(bad)).toEqual([
      expect.stringContaining('$.tx_hash: 0xABAB'),
      expect.stringContaining('$.key_page_version: "3" is not a JSON number'),
      expect.stringContaining('$.governance_id: retired name'),
      expect.stringContaining('$.chain_accounts[0].chain_id: 80002'),
      expect.stringContaining('$.chain_accounts[0].deployment_tx: abab'),
      expect.stringContaining('$.pagination: keys has_more,limit'),
      expect.stringContaining('$.keyBook: not a snake_case name'),
    ]);
    const good = { id: 'x', tx_hash: 'ab'.repeat(32), chain_accounts: [{ chain: 'polygon-amoy', chain_id: 'polygon-amoy', evm_chain_id: 80002 }] };
    expect(answerDeviations(good)).toEqual([]);
  });
});
