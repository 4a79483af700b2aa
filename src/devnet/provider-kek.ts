/**
 * The devnet's key-encryption key for provider-signing identities: generated once and kept in
 * `<dataDir>/provider-kek.key` (mode 0600) as a PROVIDER_KEKS entry, so a restarted devnet still opens the keys it
 * holds. PROVIDER_KEKS in the environment takes precedence over the file. (Production configures its KEKs; the file
 * beside the database is a devnet convenience: a backup of the data directory then holds both.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { newKekEntry, parseKekList, type Kek } from '../identity/provider-keys.js';

export function providerKekFile(dataDir: string): string {
  return join(dataDir, 'provider-kek.key');
}

/** The configured KEKs, or the devnet's own from `<dataDir>/provider-kek.key` (generated on first use). */
export function devnetProviderKeks(configured: Kek[], dataDir: string): Kek[] {
  if (configured.length > 0) return configured;
  const file = providerKekFile(dataDir);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${newKekEntry('devnet-1')}\n`, { mode: 0o600 });
  }
  return parseKekList(readFileSync(file, 'utf8').trim());
}
