/**
 * The validator's append-only store (src/validator/store.ts): what it records survives a restart, each record is
 * one appended line (earlier bytes never rewritten), a torn last line is cut off, a bad line elsewhere stops the
 * start, and a version 1 file is converted in place. Records are synced to disk off the event loop, one sync for
 * every record appended before it started (group commit).
 */
import { appendFileSync, fdatasync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createValidatorStore, ValidatorStoreError } from '../../src/validator/store.js';

const dirs: string[] = [];
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'vstore-'));
  dirs.push(d);
  return join(d, 'sub', 'state-0.json');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const OP = `0x${'0a'.repeat(32)}`;
const ANCHOR = `0x${'AB'.repeat(32)}`;

/** A closed store file holding the attestation of ANCHOR for (1, OP). */
function fileWithOneAttestation(): string {
  const f = file();
  const s = createValidatorStore(f);
  s.recordAttestation(1n, OP, ANCHOR);
  s.close();
  return f;
}

describe('validator store', () => {
  it('remembers attestations and written results across a restart', () => {
    const f = file();
    const s = createValidatorStore(f);
    expect(s.attestedAnchor(1n, OP)).toBeUndefined();
    s.recordAttestation(1n, OP, ANCHOR);
    s.recordResult('0xRES', { txId: 'tx1', entryHash: 'e1' });
    s.recordResult('0xres2', { txId: 'tx2' });
    s.close();

    const again = createValidatorStore(f);
    expect(again.attestedAnchor(1n, OP.toUpperCase().replace('0X', '0x'))).toBe(ANCHOR.toLowerCase());
    expect(again.attestedAnchor(2n, OP)).toBeUndefined(); // keyed by chain too
    expect(again.writtenResult('0xres')).toEqual({ txId: 'tx1', entryHash: 'e1' });
    expect(again.writtenResult('0xRES2')).toEqual({ txId: 'tx2' });
    again.close();
  });

  it('appends one line per record and never rewrites what is already there', () => {
    const f = file();
    const s = createValidatorStore(f);
    const sizes: string[] = [readFileSync(f, 'utf8')];
    for (let i = 0; i < 5; i++) {
      s.recordAttestation(1n, `0x${i.toString(16).padStart(64, '0')}`, ANCHOR);
      sizes.push(readFileSync(f, 'utf8'));
    }
    for (let i = 1; i < sizes.length; i++) {
      expect(sizes[i]!.startsWith(sizes[i - 1]!)).toBe(true);
      expect(sizes[i]!.split('\n').length).toBe(sizes[i - 1]!.split('\n').length + 1);
    }
    s.close();
  });

  it('cuts off a torn last line and keeps appending after it', () => {
    const f = fileWithOneAttestation();
    const intact = readFileSync(f, 'utf8');
    appendFileSync(f, '{"a":["1:0xdead","0xbeef",17'); // the process died mid-append

    const again = createValidatorStore(f);
    expect(readFileSync(f, 'utf8')).toBe(intact);
    expect(again.attestedAnchor(1n, '0xdead')).toBeUndefined();
    expect(again.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
    again.recordResult('0xr', { txId: 't' });
    again.close();
    const third = createValidatorStore(f);
    expect(third.writtenResult('0xr')).toEqual({ txId: 't' });
    third.close();
  });

  it('a short write is completed; a write that fails part way is cut off, leaves nothing in memory, and later records survive a restart', () => {
    const f = file();
    let mode: 'short' | 'full-disk' | 'ok' = 'short';
    const s = createValidatorStore(f, {
      write: (fd, buf, off, len) => {
        if (mode === 'ok') return writeSync(fd, buf, off, len);
        if (len > 10) return writeSync(fd, buf, off, 10); // ten bytes, as a nearly full disk or a file size limit allows
        if (mode === 'short') return writeSync(fd, buf, off, len);
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    });
    s.recordAttestation(1n, OP, ANCHOR); // written in pieces
    mode = 'full-disk';
    const op2 = `0x${'0b'.repeat(32)}`;
    expect(() => s.recordAttestation(1n, op2, ANCHOR)).toThrow(/cannot append a record: ENOSPC/);
    expect(s.attestedAnchor(1n, op2)).toBeUndefined();
    mode = 'ok';
    const op3 = `0x${'0c'.repeat(32)}`;
    s.recordAttestation(1n, op3, ANCHOR);
    s.close();
    const again = createValidatorStore(f); // would refuse to start on a torn line in the middle
    expect(again.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
    expect(again.attestedAnchor(1n, op2)).toBeUndefined();
    expect(again.attestedAnchor(1n, op3)).toBe(ANCHOR.toLowerCase());
    again.close();
  });

  it('refuses to start on a bad line before the end, or on a file that is not a store', () => {
    const f = fileWithOneAttestation();
    const text = readFileSync(f, 'utf8');
    const lines = text.split('\n');
    writeFileSync(f, [lines[0], '{"a":["1:0x1"]}', ...lines.slice(1)].join('\n'));
    expect(() => createValidatorStore(f)).toThrow(ValidatorStoreError);
    expect(() => createValidatorStore(f)).toThrow(/line 2 is not a store record/);
    writeFileSync(f, 'hello\n');
    expect(() => createValidatorStore(f)).toThrow(/not a validator store/);
  });

  it('converts a version 1 file (one JSON object) in place', () => {
    const f = file();
    createValidatorStore(f).close(); // makes the directory
    const v1 = {
      version: 1,
      attested: { [`1:${OP}`]: { anchorId: ANCHOR.toLowerCase(), at: 1 } },
      results: { '0xres': { txId: 'tx1', entryHash: 'e1', at: 2 }, '0xres2': { txId: 'tx2', at: 3 } },
    };
    writeFileSync(f, JSON.stringify(v1));
    const s = createValidatorStore(f);
    expect(s.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
    expect(s.writtenResult('0xres')).toEqual({ txId: 'tx1', entryHash: 'e1' });
    expect(s.writtenResult('0xres2')).toEqual({ txId: 'tx2' });
    s.close();
    expect(readFileSync(f, 'utf8').split('\n')[0]).toBe('{"version":2}');
    const again = createValidatorStore(f);
    expect(again.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
    again.close();
  });

  /** The real fdatasync, each call held until the test releases it; counts the calls. */
  function heldSyncs() {
    const held: (() => Promise<void>)[] = [];
    let calls = 0;
    let fail: NodeJS.ErrnoException | undefined;
    const fdatasyncHeld = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
      calls++;
      const f = fail;
      fail = undefined;
      // released: the store's callback runs (the real sync first, on the libuv pool), however long that takes
      held.push(
        () =>
          new Promise<void>((ran) => {
            if (f) {
              done(f);
              ran();
            } else {
              fdatasync(fd, (err) => {
                done(err);
                ran();
              });
            }
          }),
      );
    };
    const settled = <T>(p: Promise<T>) => {
      const st = { done: false, error: undefined as unknown };
      p.then(
        () => (st.done = true),
        (e) => {
          st.done = true;
          st.error = e;
        },
      );
      return st;
    };
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const settle = () => new Promise((r) => setImmediate(r)); // the promise reactions of the store's callback
    return {
      fdatasync: fdatasyncHeld,
      calls: () => calls,
      failNext: (e: NodeJS.ErrnoException) => (fail = e),
      release: async () => {
        await tick(); // the sync starts a microtask after the append
        await held.shift()!();
        await settle();
      },
      settled,
    };
  }

  it('records made in one turn share one disk sync, and each promise resolves only when it is on disk', async () => {
    const h = heldSyncs();
    const s = createValidatorStore(file(), { fdatasync: h.fdatasync });
    const ops = Array.from({ length: 20 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
    const recs = ops.map((op) => h.settled(s.recordAttestation(1n, op, ANCHOR)));
    expect(s.attestedAnchor(1n, ops[19]!)).toBe(ANCHOR.toLowerCase()); // in memory at once, for concurrent requests
    await new Promise((r) => setTimeout(r, 5));
    expect(h.calls()).toBe(1);
    expect(recs.some((r) => r.done)).toBe(false);
    await h.release();
    expect(recs.every((r) => r.done && r.error === undefined)).toBe(true);
    expect(h.calls()).toBe(1);
    await s.durable(); // nothing unsynced: no further sync
    expect(h.calls()).toBe(1);
    s.close();
  });

  it('a record made while a sync runs waits for the next one; durable() waits for the sync covering earlier records', async () => {
    const h = heldSyncs();
    const s = createValidatorStore(file(), { fdatasync: h.fdatasync });
    const a = h.settled(s.recordAttestation(1n, OP, ANCHOR));
    await new Promise((r) => setTimeout(r, 5)); // sync 1 (covering a) is running
    const again = h.settled(s.durable()); // a concurrent identical request: a is recorded but not yet on disk
    const b = h.settled(s.recordResult('0xres', { txId: 'tx1' }));
    const c = h.settled(s.recordResult('0xres2', { txId: 'tx2' }));
    await h.release();
    expect([a.done, again.done, b.done, c.done]).toEqual([true, true, false, false]);
    expect(h.calls()).toBe(2); // b and c share sync 2
    await h.release();
    expect([b.done, c.done]).toEqual([true, true]);
    s.close();
  });

  it('a failed sync fails the records it covered, and the next call syncs again', async () => {
    const h = heldSyncs();
    const s = createValidatorStore(file(), { fdatasync: h.fdatasync });
    h.failNext(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const a = h.settled(s.recordAttestation(1n, OP, ANCHOR));
    await h.release();
    expect((a.error as Error)?.message).toMatch(/EIO/);
    const retry = h.settled(s.durable());
    await h.release();
    expect(retry).toEqual({ done: true, error: undefined });
    expect(h.calls()).toBe(2);
    // once closed, a record whose sync failed is reported, not synced on a descriptor that may be gone
    h.failNext(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const b = h.settled(s.recordResult('0xres', { txId: 'tx1' }));
    await h.release();
    expect((b.error as Error)?.message).toMatch(/EIO/);
    s.close();
    await expect(s.durable()).rejects.toThrow(/closed before its last records were synced/);
    expect(h.calls()).toBe(3);
  });

  it('close waits for a pending sync before it closes the file', async () => {
    const h = heldSyncs();
    const f = file();
    const s = createValidatorStore(f, { fdatasync: h.fdatasync });
    const a = h.settled(s.recordAttestation(1n, OP, ANCHOR));
    await new Promise((r) => setTimeout(r, 5));
    s.close();
    await h.release(); // the real fdatasync on the log's descriptor: still open
    expect(a).toEqual({ done: true, error: undefined });
    const again = createValidatorStore(f);
    expect(again.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
    again.close();
  });

  it('after close, recording throws (nothing is kept in memory only); close twice is fine', () => {
    const s = createValidatorStore(file());
    s.close();
    s.close();
    expect(() => s.recordAttestation(1n, OP, ANCHOR)).toThrow(/closed/);
    expect(s.attestedAnchor(1n, OP)).toBeUndefined();
    const mem = createValidatorStore();
    mem.recordAttestation(1n, OP, ANCHOR);
    expect(mem.attestedAnchor(1n, OP)).toBe(ANCHOR.toLowerCase());
  });
});
