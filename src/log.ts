/**
 * JSON-lines logger. One line per event: time, level, msg and the context fields bound with `child`
 * (request id, org id, workflow id where known). Values under secret-looking keys are never printed, and URLs in
 * the message, in error messages and in string values are masked (src/net/redact.ts: credentials, and the path and
 * query of the configured RPC / ledger URLs, where providers put their keys). An error is written as its name and
 * message, and the parameters of a failed database query are never written (src/net/redact-query.ts: the SQL and
 * the SQLSTATE stay, the values go), in an error or in any string.
 */
import { redactUrls } from './net/redact.js';
import { redactQueryText, safeErrorMessage } from './net/redact-query.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEY = /(api[-_]?key|secret|private[-_]?key|sponsor[-_]?key|password|authorization|raw[-_]?key|seed)/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function redact(value: unknown, depth = 0): unknown {
  if (value instanceof Error) return { name: value.name, message: redactUrls(safeErrorMessage(value)) };
  if (typeof value === 'string') return redactUrls(redactQueryText(value));
  if (typeof value === 'bigint') return value.toString();
  if (!value || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1)]));
}

/**
 * Log lines bound for stdout, written together once per turn of the event loop: one write for the lines of a
 * turn instead of one each (a busy API logs a line per request). What is pending when the process exits is
 * written then (stdout to a file or a pipe is written synchronously at exit).
 */
const pendingLines: string[] = [];
let exitFlush = false;

function flushLines(): void {
  if (!pendingLines.length) return;
  const text = `${pendingLines.join('\n')}\n`;
  pendingLines.length = 0;
  process.stdout.write(text);
}

function writeStdout(line: string): void {
  if (!pendingLines.length) {
    setImmediate(flushLines);
    if (!exitFlush) {
      exitFlush = true;
      process.on('exit', flushLines);
    }
  }
  pendingLines.push(line);
}

/** A field's value as it may be written: under a secret-looking key, `[redacted]`. */
function redactField(key: string, value: unknown): unknown {
  return SECRET_KEY.test(key) ? '[redacted]' : redact(value, 1);
}

export function createLogger(level: LogLevel = 'info', bound: Record<string, unknown> = {}, write: (line: string) => void = writeStdout): Logger {
  return boundLogger(ORDER[level], addFields({}, bound), write);
}

/** `fields`, redacted, added to `out` (a key already there keeps its place, as in a spread); returns `out`. */
function addFields(out: Record<string, unknown>, fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (fields) for (const k of Object.keys(fields)) out[k] = redactField(k, fields[k]);
  return out;
}

/** `,"key":value` for each field that JSON writes (as JSON.stringify of the object would: undefined is left out). */
function jsonMembers(fields: Record<string, unknown>): string {
  let out = '';
  for (const k of Object.keys(fields)) {
    const v = JSON.stringify(fields[k]);
    if (v !== undefined) out += `,${JSON.stringify(k)}:${v}`;
  }
  return out;
}

const HEAD_KEYS = new Set(['time', 'level', 'msg']);

/**
 * A logger whose bound fields are redacted and written as JSON once, when it is made, not again on every line. A
 * line whose fields name a key already there (time, level, msg or a bound one) is built as an object instead, so that
 * the field's value takes the key's place, as in a spread.
 */
function boundLogger(min: number, bound: Record<string, unknown>, write: (line: string) => void): Logger {
  const boundJson = jsonMembers(bound);
  const plain = !Object.keys(bound).some((k) => HEAD_KEYS.has(k));
  const overlaps = (fields: Record<string, unknown>) => Object.keys(fields).some((k) => HEAD_KEYS.has(k) || Object.hasOwn(bound, k));
  const emit = (l: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[l] < min) return;
    const time = new Date().toISOString();
    const text = redactUrls(redactQueryText(msg));
    if (plain && (!fields || !overlaps(fields))) {
      write(`{"time":"${time}","level":"${l}","msg":${JSON.stringify(text)}${boundJson}${fields ? jsonMembers(addFields({}, fields)) : ''}}`);
    } else {
      write(JSON.stringify(addFields({ time, level: l, msg: text, ...bound }, fields)));
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => boundLogger(min, addFields({ ...bound }, fields), write),
  };
}
