/** The Temporal dev-server profile in temporal-dev.yml, parsed and turned into `temporal server start-dev` argv. */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';

export const PROFILE_PATH = fileURLToPath(new URL('../../temporal-dev.yml', import.meta.url));

const profileSchema = z.object({
  namespace: z.string().min(1),
  ip: z.string().min(1),
  port: z.number().int().min(1).max(65535),
  uiPort: z.number().int().min(1).max(65535),
  dbFilename: z.string().min(1).nullable().optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'never']).default('warn'),
  searchAttributes: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/), z.enum(['Keyword', 'Text', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'])),
  dynamicConfig: z.record(z.string(), z.unknown()).default({}),
});
export type TemporalProfile = z.infer<typeof profileSchema>;

export function loadTemporalProfile(path = PROFILE_PATH): TemporalProfile {
  const parsed = profileSchema.safeParse(parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    throw new Error(`${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** argv after the binary; `dbFilename: null` means in memory, `headless` drops the UI. */
export function devServerArgs(p: TemporalProfile, opts: { headless?: boolean } = {}): string[] {
  const args = ['server', 'start-dev', '--namespace', p.namespace, '--ip', p.ip, '--port', String(p.port), '--log-level', p.logLevel];
  if (opts.headless) args.push('--headless');
  else args.push('--ui-port', String(p.uiPort));
  if (p.dbFilename) args.push('--db-filename', p.dbFilename);
  for (const [name, type] of Object.entries(p.searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(p.dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  return args;
}

/**
 * The profile with its database file placed for a devnet on `dataDir`: a relative dbFilename (temporal-dev.yml:
 * `temporal/dev.sqlite`) is taken relative to DATA_DIR, so a fresh DATA_DIR is a fresh Temporal too; an absolute
 * one stays, null (in memory) stays null. The result is absolute (the server runs in the project directory).
 */
export function withDataDir(p: TemporalProfile, dataDir: string): TemporalProfile {
  if (!p.dbFilename || isAbsolute(p.dbFilename)) return p;
  return { ...p, dbFilename: resolve(dataDir, p.dbFilename) };
}
