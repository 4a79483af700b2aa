/**
 * `cli verify-bundle <file> [--rpc chain=url ...]`: verifies a proof bundle file (src/proof/verify.ts), offline
 * unless --rpc URLs are given, prints each check and exits 0 when valid, 1 when invalid, 2 on a usage error.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CliIo } from '../webhooks/cli.js';
import { verifyBundle } from './verify.js';

const USAGE = `usage:
  cli verify-bundle <bundle.json|-> [--rpc <chain>=<json-rpc url> ...] [--json]`;

export async function runVerifyBundleCli(argv: string[], io: CliIo): Promise<number> {
  let file: string | undefined;
  let rpc: Record<string, string> = {};
  let json = false;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { rpc: { type: 'string', multiple: true }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) throw new Error('exactly one bundle file is required');
    file = positionals[0]!;
    json = !!values.json;
    rpc = Object.fromEntries(
      (values.rpc ?? []).map((pair) => {
        const i = pair.indexOf('=');
        if (i < 1 || i === pair.length - 1) throw new Error(`--rpc must be chain=url, got ${pair}`);
        return [pair.slice(0, i), pair.slice(i + 1)];
      }),
    );
  } catch (e) {
    io.err(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file === '-' ? 0 : file);
  } catch (e) {
    io.err(`cannot read ${file}: ${(e as Error).message}`);
    return 2;
  }
  const v = await verifyBundle(new Uint8Array(bytes), { rpc });
  if (json) io.out(JSON.stringify(v, null, 2));
  else {
    for (const c of v.checks) io.out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
    const failed = v.checks.filter((c) => !c.ok).length;
    io.out(v.valid ? `bundle valid${v.complete ? '' : ', PARTIAL: some legs of the intent failed (see chains)'} (${v.checks.length} checks)` : `bundle INVALID: ${failed} of ${v.checks.length} checks failed`);
  }
  return v.valid ? 0 : 1;
}
