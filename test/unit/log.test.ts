import { afterEach, describe, expect, it, vi } from 'vitest';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { createLogger } from '../../src/log.js';
import { redactError } from '../../src/net/redact.js';

describe('logger', () => {
  it('writes JSON lines with bound context and redacts secrets', () => {
    const lines: string[] = [];
    const log = createLogger('info', { request_id: 'r1' }, (l) => lines.push(l)).child({ org_id: 'o1' });
    log.debug('hidden');
    log.info('hello', { apiKey: 'ck_live_x', nested: { sponsorKey: 'ab', relayerPrivateKey: '0x1', webhook_secret: 's' }, n: 10n });
    expect(lines).toHaveLength(1);
    const rec = JSON.parse(lines[0]);
    expect(rec).toMatchObject({ level: 'info', msg: 'hello', request_id: 'r1', org_id: 'o1', n: '10' });
    expect(rec.apiKey).toBe('[redacted]');
    expect(rec.nested).toEqual({ sponsorKey: '[redacted]', relayerPrivateKey: '[redacted]', webhook_secret: '[redacted]' });
    expect(lines[0]).not.toContain('ck_live_x');
  });
});

describe('logger lines', () => {
  afterEach(() => vi.useRealTimers());

  it("are exactly JSON.stringify of time, level, msg, the bound fields and the line's fields, a repeated key taking its place", () => {
    vi.useFakeTimers({ now: new Date('2026-11-27T10:00:00.123Z') });
    const time = '2026-11-27T10:00:00.123Z';
    const lines: string[] = [];
    const log = createLogger('debug', { request_id: 'r"1' }, (l) => lines.push(l)).child({ org_id: 'o1', gone: undefined });
    const cases: [string, Record<string, unknown> | undefined, Record<string, unknown>][] = [
      ['plain', undefined, { time, level: 'info', msg: 'plain', request_id: 'r"1', org_id: 'o1' }],
      [
        'fields',
        { a: 1, b: undefined, c: { d: [1, 'x'] }, n: 5n },
        { time, level: 'info', msg: 'fields', request_id: 'r"1', org_id: 'o1', a: 1, c: { d: [1, 'x'] }, n: '5' },
      ],
      ['over', { org_id: 'o2', z: true }, { time, level: 'info', msg: 'over', request_id: 'r"1', org_id: 'o2', z: true }],
      ['head', { msg: 'replaced', level: 'x' }, { time, level: 'x', msg: 'replaced', request_id: 'r"1', org_id: 'o1' }],
    ];
    for (const [msg, fields] of cases) log.info(msg, fields);
    expect(lines).toEqual(cases.map(([, , want]) => JSON.stringify(want)));
    const timed: string[] = [];
    createLogger('info', { time: 'bound' }, (l) => timed.push(l)).info('m', { k: 1 });
    expect(timed).toEqual([JSON.stringify({ time: 'bound', level: 'info', msg: 'm', k: 1 })]);
  });
});

describe('failed database queries in logs and error texts', () => {
  // drizzle's DrizzleQueryError over a PostgreSQL error, as pg and PGlite throw them
  const driverError = () =>
    Object.assign(new Error('duplicate key value violates unique constraint "webhook_endpoints_secret_key"'), {
      code: '23505',
      severity: 'ERROR',
      detail: 'Key (secret)=(whsec_topsecret) already exists.',
      where: 'SQL statement "insert into t values (\'whsec_topsecret\')"',
      params: ['whsec_topsecret'],
    });
  const queryError = () => new DrizzleQueryError('insert into "webhook_endpoints" ("secret") values ($1)', ['whsec_topsecret'], driverError());

  it('an error field keeps the SQL text, the reason and the SQLSTATE, never the parameters', () => {
    const lines: string[] = [];
    const log = createLogger('info', {}, (l) => lines.push(l));
    log.error('unhandled error', { err: queryError(), text: String(queryError()) });
    log.error(`failed: ${queryError().message}`);
    log.error('driver', { err: Object.assign(new Error('invalid input syntax for type uuid: "whsec_topsecret"'), { code: '22P02', severity: 'ERROR' }) });
    expect(lines.join('\n')).not.toContain('topsecret');
    const rec = JSON.parse(lines[0]!);
    expect(rec.err.message).toBe(
      'Failed query: insert into "webhook_endpoints" ("secret") values ($1)\ncause: duplicate key value violates unique constraint "webhook_endpoints_secret_key" (SQLSTATE 23505)',
    );
    expect(rec.text).toContain('params: [redacted]');
    expect(JSON.parse(lines[2]!).err.message).toBe('invalid input syntax for type uuid: [redacted] (SQLSTATE 22P02)');
  });

  it('redactError scrubs a query error and its driver cause in place (message, stack, params, detail, where)', () => {
    const err = redactError(queryError());
    const cause = err.cause as unknown as Record<string, unknown>;
    expect(err.message).toBe('Failed query: insert into "webhook_endpoints" ("secret") values ($1)');
    expect(JSON.stringify([err.message, err.stack, err.params, cause.message, cause.stack, cause.detail, cause.where, cause.params])).not.toContain(
      'topsecret',
    );
    expect(cause).toMatchObject({ code: '23505', detail: '[redacted]', where: '[redacted]' });
  });
});
