import { describe, expect, it } from 'vitest';
import { keyedSerial } from '../../src/net/serial.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('keyedSerial', () => {
  it('runs the calls of one key in call order, one at a time, and other keys alongside', async () => {
    const serial = keyedSerial<string>();
    const log: string[] = [];
    const job = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await tick(ms);
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([serial('k', job('a1', 30)), serial('k', job('a2', 1)), serial('other', job('b', 5))]);
    expect(results).toEqual(['a1', 'a2', 'b']);
    expect(log.indexOf('a2 start')).toBeGreaterThan(log.indexOf('a1 end'));
    expect(log.indexOf('b end')).toBeLessThan(log.indexOf('a1 end'));
  });

  it('goes on with the next call after one fails, and passes the failure to its caller', async () => {
    const serial = keyedSerial<string>();
    const failed = serial('k', async () => {
      await tick(5);
      throw new Error('refused');
    });
    const next = serial('k', async () => 'sent');
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('sent');
  });
});
