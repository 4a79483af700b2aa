/**
 * `cli verify-bundle <file> [--rpc chain=url ...] [--trust chain=proofAnchor[,setRoot] ...] [--ledger url]`: verifies a proof bundle
 * file (src/proof/verify.ts), offline unless --rpc URLs are given, prints each check and exits 0 when valid, 1 when
 * invalid, 2 on a usage error. Without --rpc or --trust for a chain, its validator set is the bundle's own word.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CliIo } from '../webhooks/cli.js';
import { verifyBundle } from './verify.js';

const USAGE = `usage:
  cli verify-bundle <bundle.json|-> [--rpc <chain>=<json-rpc url> ...] [--trust <chain>=<ProofAnchor>[,<validator set root>] ...] [--ledger <ledger api url>] [--json]`;

export async function runVerifyBundleCli(argv: string[], io: CliIo): Promise<number> {
  let file: string | undefined;
  let rpc: Record<string, string> = {};
  let ledger: string | undefined;
  let trust: Record<string, { proofAnchor: string; validatorSetRoot?: string }> = {};
  let json = false;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { rpc: { type: 'string', multiple: true }, trust: { type: 'string', multiple: true }, ledger: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) throw new Error('exactly one bundle file is required');
    file = positionals[0]!;
    ledger = values.ledger;
    json = !!values.json;
    rpc = Object.fromEntries(
      (values.rpc ?? []).map((pair) => {
        const i = pair.indexOf('=');
        if (i < 1 || i === pair.length - 1) throw new Error(`--rpc must be chain=url, got ${pair}`);
        return [pair.slice(0, i), pair.slice(i + 1)];
      }),
    );
    trust = Object.fromEntries(
      (values.trust ?? []).map((pair) => {
        const m = /^([^=]+)=(0x[0-9a-fA-F]{40})(?:,(0x[0-9a-fA-F]{64}))?$/.exec(pair);
        if (!m) throw new Error(`--trust must be chain=<ProofAnchor address>[,<validator set root>], got ${pair}`);
        return [m[1]!, { proofAnchor: m[2]!, ...(m[3] ? { validatorSetRoot: m[3] } : {}) }];
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
  const v = await verifyBundle(new Uint8Array(bytes), { rpc, trust, ledger });
  if (json) io.out(JSON.stringify(v, null, 2));
  else {
    for (const c of v.checks) io.out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
    const failed = v.checks.filter((c) => !c.ok).length;
    const notes = [
      ...(v.complete ? [] : ['PARTIAL: some legs of the intent failed (see chains)']),
      ...(v.anchored ? [] : ["UNANCHORED: a chain was checked against neither --trust nor --rpc, so its validator set is the bundle's own word"]),
    ];
    io.out(
      v.valid
        ? `bundle valid${notes.map((n) => `, ${n}`).join('')} (${v.checks.length} checks)`
        : `bundle INVALID: ${failed} of ${v.checks.length} checks failed`,
    );
  }
  return v.valid ? 0 : 1;
}
