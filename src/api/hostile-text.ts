/**
 * One rule for text in every input: a string (or an object key) that holds a NUL (U+0000) or a lone UTF-16 surrogate
 * is refused with 400 VALIDATION_ERROR naming the field, before any handler or query runs. PostgreSQL stores neither
 * (text cannot hold U+0000, and a lone surrogate has no UTF-8 form), and no identifier, name, URL or description
 * needs them. JSON escapes (`\u0000`, `\ud800`) parse into such strings, so the check is on parsed values: the app's
 * validation hook (src/api/app.ts) applies it to every validated body, query, header and path parameter.
 */
import { fieldOfPath } from './errors.js';

/** a high surrogate not followed by a low one, or a low surrogate not preceded by a high one */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface HostileText {
  /** the field as a VALIDATION_ERROR names it: `intent.legs[0].legId`, or a parameter's name */
  field: string;
  /** why it is refused, without the field */
  problem: string;
}

function problemOf(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain a lone UTF-16 surrogate (U+D800 to U+DFFF without its pair)';
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The first string or object key in `value` (a parsed body, or a record of parameters) that holds hostile text. */
export function findHostileText(value: unknown, path: PropertyKey[] = []): HostileText | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { field: fieldOfPath(path) || 'body', problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findHostileText(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (isPlainObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      const keyProblem = problemOf(key);
      // the key itself cannot be printed safely: name the object that holds it
      if (keyProblem) return { field: fieldOfPath(path) || 'body', problem: `a property name ${keyProblem}` };
      const found = findHostileText(v, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
