/**
 * `npm run fuzz` (through scripts/fuzz.sh, which installs schemathesis into .venv-fuzz): the whole devnet in-process
 * on free ports and a scratch data directory, an API key with every scope and a high rate limit, then schemathesis
 * against /docs/json over every operation. Checks: no 5xx, every status code documented, content type and body
 * matching the documented schema. Prints the figures (table and JSON) and exits non-zero on any failure.
 *
 * Env: FUZZ_MAX_EXAMPLES (per operation, default 10), SCHEMATHESIS (the `st` binary, default .venv-fuzz/bin/st).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { startDevnet, type Devnet } from '../src/devnet/index.js';
import { PROJECT_ROOT } from '../src/devnet/temporal.js';
import { freePort } from '../src/devnet/ports.js';
import { createLogger } from '../src/log.js';

export const FUZZ_CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];

export interface FuzzFigures {
  operations: number;
  test_cases: number;
  server_errors: number;
  schema_violations: number;
  other_failures: number;
  failing_operations: string[];
}

/** The figures from schemathesis' JUnit report (one testcase per operation, one failure element per distinct failure). */
export function parseJunit(xml: string, output: string): FuzzFigures {
  const cases = [...xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)];
  let server = 0;
  let schema = 0;
  let other = 0;
  const failing: string[] = [];
  for (const c of cases) {
    const body = c[3] ?? '';
    const failures = [...body.matchAll(/<(failure|error)\b([^>]*)>([\s\S]*?)<\/\1>|<(failure|error)\b([^>]*)\/>/g)];
    if (failures.length === 0) continue;
    failing.push(/name="([^"]*)"/.exec(c[1])?.[1] ?? '?');
    for (const f of failures) {
      const text = `${f[2] ?? f[5] ?? ''} ${f[3] ?? ''}`;
      if (/Server error/i.test(text)) server++;
      else if (/schema|Undocumented|Content-Type/i.test(text)) schema++;
      else other++;
    }
  }
  // "Test cases: N generated, ..." in the summary; falls back to the operation count
  const generated = /(\d+)\s+generated/.exec(output);
  return {
    operations: cases.length,
    test_cases: generated ? Number(generated[1]) : cases.length,
    server_errors: server,
    schema_violations: schema,
    other_failures: other,
    failing_operations: failing,
  };
}

async function main() {
  const st = process.env.SCHEMATHESIS ?? join(PROJECT_ROOT, '.venv-fuzz/bin/st');
  const maxExamples = process.env.FUZZ_MAX_EXAMPLES ?? '10';
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-fuzz-'));
  const [p1, p2, tp, ui, lp] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const config = loadConfig({
    ...process.env,
    API_PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: '', // embedded PGlite in the scratch directory
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    LEDGER_URL: `http://127.0.0.1:${lp}`,
    RATE_LIMIT_IP_RPM: '1000000',
    RATE_LIMIT_DEFAULT_RPM: '100000', // the bootstrap key's limit, which bounds the fuzz key's
    CHAINS: JSON.stringify([
      { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: `http://127.0.0.1:${p1}` },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: `http://127.0.0.1:${p2}` },
    ]),
  });
  const logger = createLogger(config.logLevel, { process: 'fuzz' });
  let devnet: Devnet | undefined;
  let code = 1;
  try {
    process.stdout.write('[fuzz] starting the devnet (Temporal, chains, ledger, validators, worker, API)...\n');
    devnet = await startDevnet(config, logger, {
      temporalProfile: { port: tp, uiPort: ui, dbFilename: join(dataDir, 'temporal.sqlite') },
    });
    const { apiUrl, adminKey } = devnet.summary;
    if (!adminKey) throw new Error('no bootstrap admin key: the scratch database was not empty');
    const res = await fetch(`${apiUrl}/v1/admin/api-keys`, {
      method: 'POST',
      headers: { 'X-API-Key': adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'fuzz', permissions: ['read', 'write', 'proof:read', 'admin'], rate_limit_rpm: 100_000 }),
    });
    if (res.status !== 201) throw new Error(`creating the fuzz key: ${res.status} ${await res.text()}`);
    const fuzzKey = ((await res.json()) as { api_key: { key: string } }).api_key.key;

    const junitPath = join(dataDir, 'junit.xml');
    const args = [
      'run',
      `${apiUrl}/docs/json`,
      '--url',
      apiUrl,
      '-H',
      `X-API-Key: ${fuzzKey}`,
      '--checks',
      FUZZ_CHECKS.join(','),
      '--phases',
      'examples,coverage,fuzzing',
      '--max-examples',
      maxExamples,
      // one worker: CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch")
      '--workers',
      '1',
      '--seed',
      process.env.FUZZ_SEED ?? '1',
      '--report',
      'junit',
      '--report-junit-path',
      junitPath,
      '--no-color',
    ];
    process.stdout.write(`[fuzz] ${st} ${args.join(' ').replace(fuzzKey, 'ck_live_…')}\n`);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(st, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        process.stdout.write(d);
      });
      child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
      child.on('error', reject);
      child.on('close', () => resolve(out));
    });
    let xml = '';
    try {
      xml = readFileSync(junitPath, 'utf8');
    } catch {
      throw new Error('schemathesis wrote no report');
    }
    const figures = parseJunit(xml, output);
    const rows: [string, string | number][] = [
      ['operations', figures.operations],
      ['test cases', figures.test_cases],
      ['server errors (5xx)', figures.server_errors],
      ['schema violations', figures.schema_violations],
      ['other failures', figures.other_failures],
    ];
    process.stdout.write(`\nFuzz figures\n${rows.map(([k, v]) => `  ${k.padEnd(22)} ${v}`).join('\n')}\n`);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    const failed = figures.operations === 0 || figures.server_errors + figures.schema_violations + figures.other_failures > 0;
    code = failed ? 1 : 0;
  } catch (err) {
    process.stderr.write(`[fuzz] ${(err as Error).stack ?? err}\n`);
  } finally {
    await devnet?.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
