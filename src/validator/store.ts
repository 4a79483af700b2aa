/**
 * A validator's own memory: which anchor it attested per (chain, operation id) — so it never signs a
 * conflicting anchor for the same operation — and which result records it wrote. In memory, and, when a path is
 * given, in an append-only log that survives restarts and power loss:
 *   - line 1 is the header `{"version":2}`; every other line is one record, `{"a":[key, anchorId, at]}` or
 *     `{"r":[resultId, txId, entryHash|null, at]}`, replayed in order on start;
 *   - a record is applied in memory and appended at once (so a concurrent request sees it), and its promise
 *     resolves once it is fdatasync'ed: the node awaits it, so an attestation is on disk before its signature
 *     leaves the node. The sync runs off the event loop, and one sync covers every record appended before it
 *     started (group commit: records made while a sync runs share the next one). Each write costs the same
 *     however long the log is;
 *   - a torn last line (the process died mid-append) is cut off on start; a bad line anywhere else stops the
 *     start, since silently forgetting an attestation could let the node sign a conflicting anchor;
 *   - a version 1 file (one JSON object, rewritten whole on every record) is converted in place on first start.
 */
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

interface Written {
  txId: string;
  entryHash?: string;
}

/** The version 1 file: the whole state as one JSON object. */
interface StoreStateV1 {
  version: 1;
  attested: Record<string, { anchorId: string; at: number }>;
  results: Record<string, Written & { at: number }>;
}

type LogRecord = { a: [key: string, anchorId: string, at: number] } | { r: [resultId: string, txId: string, entryHash: string | null, at: number] };

const HEADER = JSON.stringify({ version: 2 });

export interface ValidatorStore {
  attestedAnchor(chainId: bigint, operationId: string): string | undefined;
  /** In memory at once; the promise resolves when the record is on disk. */
  recordAttestation(chainId: bigint, operationId: string, anchorId: string): Promise<void>;
  writtenResult(resultId: string): Written | undefined;
  /** In memory at once; the promise resolves when the record is on disk. */
  recordResult(resultId: string, r: Written): Promise<void>;
  /** Resolves when every record made so far is on disk (one made by a concurrent request may still be syncing). */
  durable(): Promise<void>;
  /** Closes the log file once pending syncs end; recording afterwards throws. Idempotent. */
  close(): void;
}

export class ValidatorStoreError extends Error {}

export interface ValidatorStoreOptions {
  /** the disk sync (tests wrap it to count or hold syncs); fs.fdatasync */
  fdatasync?: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
  /** one write(2) (tests make it short or fail); fs.writeSync */
  write?: (fd: number, buf: Buffer, offset: number, length: number) => number;
}

export function createValidatorStore(file?: string, opts: ValidatorStoreOptions = {}): ValidatorStore {
  const sync = opts.fdatasync ?? fdatasync;
  const write = opts.write ?? writeSync;
  // in memory what the lookups answer; the log also keeps when each record was made, for operators
  const attested = new Map<string, string>();
  const results = new Map<string, Written>();
  const apply = (rec: LogRecord) => {
    if ('a' in rec) attested.set(rec.a[0], rec.a[1]);
    else results.set(rec.r[0], { txId: rec.r[1], ...(rec.r[2] ? { entryHash: rec.r[2] } : {}) });
  };
  const fd = file === undefined ? undefined : openLog(file, apply);
  /** bytes of complete records in the file */
  let size = fd === undefined ? 0 : fstatSync(fd).size;
  let closed = false;
  let broken: ValidatorStoreError | undefined;
  // group commit: `running` is the sync under way, covering the first `runningUpTo` appends; `queued` is the next
  // one, which every append made meanwhile joins
  let written = 0;
  let synced = 0;
  let runningUpTo = 0;
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  const durable = (): Promise<void> => {
    if (fd === undefined || synced >= written) return Promise.resolve();
    if (runningUpTo >= written) return running;
    if (closed && !queued) return Promise.reject(new ValidatorStoreError(`${file}: closed before its last records were synced`));
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = undefined; // appends from here on need the sync after this one
        const upTo = (runningUpTo = written);
        running = new Promise<void>((resolve, reject) =>
          sync(fd, (err) => {
            if (err) {
              runningUpTo = synced; // what it covered is not on disk: the next call syncs again
              return reject(err);
            }
            synced = Math.max(synced, upTo);
            resolve();
          }),
        );
        return running;
      });
    return queued;
  };
  const append = (rec: LogRecord): Promise<void> => {
    if (closed) throw new ValidatorStoreError(`${file ?? 'store'}: closed`);
    if (broken) throw broken;
    if (fd !== undefined) {
      // a write may be short (a full disk, a file size limit): the rest is written, or the part that was is cut
      // off again, so a record the node answers for is whole in the file and a failed one leaves no torn line
      const buf = Buffer.from(`${JSON.stringify(rec)}\n`);
      let done = 0;
      try {
        while (done < buf.length) done += write(fd, buf, done, buf.length - done);
      } catch (e) {
        if (done > 0) {
          try {
            ftruncateSync(fd, size);
          } catch (t) {
            broken = new ValidatorStoreError(`${file}: a failed append could not be cut off (${(t as Error).message}); no further records`);
          }
        }
        throw new ValidatorStoreError(`${file}: cannot append a record: ${(e as Error).message}`);
      }
      size += buf.length;
      written++;
    }
    apply(rec);
    return durable();
  };
  const key = (c: bigint, op: string) => `${c}:${op.toLowerCase()}`;
  return {
    attestedAnchor: (c, op) => attested.get(key(c, op)),
    recordAttestation: (c, op, anchorId) => append({ a: [key(c, op), anchorId.toLowerCase(), Date.now()] }),
    writtenResult: (id) => results.get(id.toLowerCase()),
    recordResult: (id, r) => append({ r: [id.toLowerCase(), r.txId, r.entryHash ?? null, Date.now()] }),
    durable,
    close() {
      if (closed) return;
      closed = true;
      if (fd !== undefined) void (queued ?? running).catch(() => {}).finally(() => closeSync(fd));
    },
  };
}

/** Replays the log at `file` into `apply` (converting a version 1 file first) and opens it for appending. */
function openLog(file: string, apply: (rec: LogRecord) => void): number {
  mkdirSync(dirname(file), { recursive: true });
  if (!existsSync(file)) writeDurably(file, `${HEADER}\n`);
  let text = readFileSync(file, 'utf8');
  if (text.startsWith('{"version":1')) {
    writeDurably(file, convertV1(file, text));
    text = readFileSync(file, 'utf8');
  }
  const lines = text.split('\n');
  if (lines[0] !== HEADER) throw new ValidatorStoreError(`${file}: not a validator store (first line ${JSON.stringify(lines[0]?.slice(0, 40))})`);
  // every complete append ends with '\n', so the last element is '' or a torn append (its newline never written)
  let goodLength = HEADER.length + 1;
  for (const [i, line] of lines.slice(0, -1).entries()) {
    if (i === 0) continue; // the header
    const rec = parseRecord(line);
    if (!rec) throw new ValidatorStoreError(`${file}: line ${i + 1} is not a store record; refusing to start without it`);
    apply(rec);
    goodLength += Buffer.byteLength(line) + 1;
  }
  const fd = openSync(file, 'r+');
  if (goodLength < Buffer.byteLength(text)) {
    ftruncateSync(fd, goodLength);
    fdatasyncSync(fd);
  }
  closeSync(fd);
  return openSync(file, 'a');
}

function parseRecord(line: string): LogRecord | undefined {
  let rec: Partial<{ a: unknown[]; r: unknown[] }>;
  try {
    rec = JSON.parse(line);
  } catch {
    return undefined;
  }
  const str = (x: unknown) => typeof x === 'string';
  if (Array.isArray(rec?.a) && rec.a.length === 3 && str(rec.a[0]) && str(rec.a[1]) && typeof rec.a[2] === 'number') return rec as LogRecord;
  if (Array.isArray(rec?.r) && rec.r.length === 4 && str(rec.r[0]) && str(rec.r[1]) && (rec.r[2] === null || str(rec.r[2])) && typeof rec.r[3] === 'number')
    return rec as LogRecord;
  return undefined;
}

function convertV1(file: string, text: string): string {
  let v1: StoreStateV1;
  try {
    v1 = JSON.parse(text) as StoreStateV1;
  } catch (e) {
    throw new ValidatorStoreError(`${file}: unreadable version 1 store (${(e as Error).message})`);
  }
  const out = [HEADER];
  for (const [k, a] of Object.entries(v1.attested ?? {})) out.push(JSON.stringify({ a: [k, a.anchorId, a.at] }));
  for (const [id, w] of Object.entries(v1.results ?? {})) out.push(JSON.stringify({ r: [id, w.txId, w.entryHash ?? null, w.at] }));
  return `${out.join('\n')}\n`;
}

/** Replaces `file` with `content`: written to a temporary file, synced, renamed over, and the directory synced. */
function writeDurably(file: string, content: string): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
