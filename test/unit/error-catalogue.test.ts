/**
 * The error catalogue (GET /v1/errors) is the source of truth for error codes: a scan of the source finds every code
 * the gateway can answer with and fails on one the catalogue lacks, on a catalogue entry no code path uses, and on a
 * status thrown with a code that the catalogue does not give it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/services/error-catalogue.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CATALOGUE_FILE = 'src/services/error-catalogue.ts';

/**
 * Where the API's error codes are written: the API and its use cases, and the few modules below them whose errors
 * carry a code the use cases pass on (intent and governance input errors) or that answer HTTP themselves (the
 * server's parse errors). The validators' own refusal codes are theirs, not the API's.
 */
const SOURCES = ['src/api', 'src/services', 'src/net/server.ts', 'src/protocol/intent/request.ts', 'src/governance/operations.ts'];

function files(path: string): string[] {
  const abs = join(ROOT, path);
  if (statSync(abs).isFile()) return [path];
  return readdirSync(abs).flatMap((name) => files(join(path, name)));
}

const sources = SOURCES.flatMap(files)
  .filter((f) => f.endsWith('.ts') && relative('.', f) !== CATALOGUE_FILE)
  .map((f) => ({ file: f, text: readFileSync(join(ROOT, f), 'utf8') }));

/** An error code is an upper-case string literal with an underscore: 'NOT_FOUND', 'RATE_LIMIT_EXCEEDED'. */
const CODE_LITERAL = /'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g;
/** literals of that form in these files that are not error codes: node's own parser error the server maps */
const NOT_CODES = new Set<string>(['HPE_HEADER_OVERFLOW']);

describe('the error catalogue', () => {
  const byCode = new Map(ERROR_CATALOGUE.map((e) => [e.code, e]));

  it('lists each code once, with its status among its statuses, a meaning and an audience', () => {
    expect(byCode.size).toBe(ERROR_CATALOGUE.length);
    for (const e of ERROR_CATALOGUE) {
      expect(e.statuses[0], e.code).toBe(e.status);
      for (const s of e.statuses) expect(s >= 400 && s < 600, `${e.code} ${s}`).toBe(true);
      expect(e.meaning.length, e.code).toBeGreaterThan(10);
      expect(['caller', 'platform']).toContain(e.audience);
    }
  });

  it('holds every code the source answers with, and no code the source never uses', () => {
    const used = new Map<string, string>();
    for (const { file, text } of sources) for (const m of text.matchAll(CODE_LITERAL)) if (!NOT_CODES.has(m[1])) used.set(m[1], file);
    expect(used.size).toBeGreaterThan(50); // the scan does find the codes
    const missing = [...used].filter(([code]) => !byCode.has(code)).map(([code, file]) => `${code} (${file})`);
    expect(missing, 'codes thrown but not in src/services/error-catalogue.ts').toEqual([]);
    const unused = [...byCode.keys()].filter((code) => !used.has(code));
    expect(unused, 'catalogue entries no source file uses').toEqual([]);
  });

  it('gives every code the statuses it is thrown with', () => {
    const thrown = /new ApiError\(\s*(\d{3}),\s*'([A-Z_0-9]+)'/g;
    const pairs = sources.flatMap(({ file, text }) => [...text.matchAll(thrown)].map((m) => ({ file, status: Number(m[1]), code: m[2] })));
    expect(pairs.length).toBeGreaterThan(80);
    const wrong = pairs.filter((p) => !byCode.get(p.code)?.statuses.includes(p.status)).map((p) => `${p.status} ${p.code} (${p.file})`);
    expect(wrong).toEqual([]);
  });

  it('the scan would catch a code missing from the catalogue', () => {
    const probe = "throw new ApiError(418, 'NOT_IN_THE_CATALOGUE', 'x')";
    const found = [...probe.matchAll(CODE_LITERAL)].map((m) => m[1]);
    expect(found).toEqual(['NOT_IN_THE_CATALOGUE']);
    expect(byCode.has(found[0])).toBe(false);
  });
});
