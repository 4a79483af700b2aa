import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';

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
