/**
 * `npm run fuzz` (through scripts/fuzz.sh, which installs schemathesis into .venv-fuzz): the whole devnet in-process
 * on free ports and a scratch data directory, an API key with every scope and a high rate limit, then schemathesis
 * against /docs/json over every operation, once per seed. Every check schemathesis has (`--checks all`: no 5xx,
 * every status code, content type, header and body as documented, schema-violating requests refused and valid ones
 * accepted, missing headers and wrong methods answered as documented, auth enforced, deleted resources gone and
 * created ones readable) over every phase, the stateful one included (it chains operations through the OpenAPI
 * links and the ids answers carry). Prints the figures of each seed and exits non-zero on any failure but the
 * schema-valid requests the server refuses (see failureCount).
 *
 * Args: `--seeds N` (default 3: seeds FUZZ_SEED, FUZZ_SEED+1, ...). Env: FUZZ_MAX_EXAMPLES (per operation, default
 * 10), FUZZ_SEED (the first seed, default 1), SCHEMATHESIS (the `st` binary, default .venv-fuzz/bin/st).
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

export const FUZZ_CHECKS = ['all'];
export const FUZZ_PHASES = ['examples', 'coverage', 'fuzzing', 'stateful'];

export interface FuzzFigures {
  seed?: number;
  operations: number;
  test_cases: number;
  server_errors: number;
  schema_violations: number;
  undocumented_statuses: number;
  wrong_method: number;
  /** requests valid by the schema refused with a 4xx (positive_data_acceptance) */
  valid_refused: number;
  other_failures: number;
  failing_operations: string[];
}

/** Schemathesis' failure titles by the figure they count in; any other title is an other failure. */
const FAILURE_KINDS: [keyof FuzzFigures, RegExp][] = [
  ['server_errors', /^Server error$/],
  ['undocumented_statuses', /^Undocumented HTTP status code$/],
  ['wrong_method', /^Unsupported method incorrect response$/],
  [
    'schema_violations',
    /^(Response violates schema|Missing Content-Type header|Malformed media type|Undocumented Content-Type|Response header does not conform to the schema|Missing required headers|JSON deserialization error|Content deserialization error)$/,
  ],
  ['valid_refused', /^API rejected schema-compliant request$/],
];

/**
 * The figures of one run: the operations from schemathesis' JUnit report (one testcase per operation, one more for
 * the stateful phase), the failures from its FAILURES section (each distinct failure once, under its operation, as a
 * `- <title>` line; what its summary counts).
 */
export function parseRun(xml: string, output: string): FuzzFigures {
  const figures: FuzzFigures = {
    operations: 0,
    test_cases: 0,
    server_errors: 0,
    schema_violations: 0,
    undocumented_statuses: 0,
    wrong_method: 0,
    valid_refused: 0,
    other_failures: 0,
    failing_operations: [],
  };
  for (const c of xml.matchAll(/<testcase\b[^>]*?name="([^"]*)"/g)) if (/^[A-Z]+ \//.test(c[1])) figures.operations++;
  const start = output.search(/^=+ FAILURES =+$/m);
  if (start >= 0) {
    const rest = output.slice(start).replace(/^=+ FAILURES =+$/m, '');
    const end = rest.search(/^=+ [A-Z]+ =+$/m);
    const section = end >= 0 ? rest.slice(0, end) : rest;
    let operation = '?';
    for (const line of section.split('\n')) {
      const op = /^_+ (.+?) _+$/.exec(line);
      if (op) {
        operation = op[1];
        continue;
      }
      const title = /^- (.+?)\s*$/.exec(line)?.[1];
      if (!title) continue;
      const kind = FAILURE_KINDS.find(([, re]) => re.test(title))?.[0] ?? 'other_failures';
      (figures[kind] as number)++;
      if (!figures.failing_operations.includes(operation)) figures.failing_operations.push(operation);
    }
  }
  // schemathesis errors (not failures: a test it could not run) count as other failures
  const errors = /(\d+) errors?\b/.exec(output.slice(output.search(/^=+ SUMMARY =+$/m) >= 0 ? output.search(/^=+ SUMMARY =+$/m) : output.length));
  if (errors) figures.other_failures += Number(errors[1]);
  // "N generated, ..." in the summary; falls back to the operation count
  const generated = /(\d+)\s+generated/.exec(output);
  figures.test_cases = generated ? Number(generated[1]) : figures.operations;
  return figures;
}

/**
 * The failures that fail the run: every kind but `valid_refused`, which is printed and listed. Those are requests the
 * schema allows that the server refuses by a rule JSON Schema cannot state for parameters, or that needs state:
 * `cursor` with `offset` (or `starting_after`) together, an opaque cursor that is no position, one Idempotency-Key
 * reused across operations, a body that must carry one of several fields (stated with anyOf, which the coverage
 * phase does not follow), a webhook URL that does not resolve.
 */
export function failureCount(f: FuzzFigures): number {
  return f.server_errors + f.schema_violations + f.undocumented_statuses + f.wrong_method + f.other_failures;
}

/** `--seeds N` from the command line (default 3). */
export function seedCount(argv: readonly string[]): number {
  const i = argv.indexOf('--seeds');
  const n = i >= 0 ? Number(argv[i + 1]) : 3;
  if (!Number.isInteger(n) || n < 1) throw new Error('--seeds takes a positive integer');
  return n;
}

/** One schemathesis run; its output is echoed and returned. */
function runSchemathesis(st: string, args: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
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
}

function figuresTable(all: FuzzFigures[]): string {
  const rows: [string, (f: FuzzFigures) => number][] = [
    ['operations', (f) => f.operations],
    ['test cases', (f) => f.test_cases],
    ['server errors (5xx)', (f) => f.server_errors],
    ['schema violations', (f) => f.schema_violations],
    ['undocumented statuses', (f) => f.undocumented_statuses],
    ['wrong-method answers', (f) => f.wrong_method],
    ['valid requests refused', (f) => f.valid_refused],
    ['other failures', (f) => f.other_failures],
  ];
  const header = `  ${''.padEnd(24)}${all.map((f) => `seed ${f.seed}`.padStart(10)).join('')}`;
  return [header, ...rows.map(([k, get]) => `  ${k.padEnd(24)}${all.map((f) => String(get(f)).padStart(10)).join('')}`)].join('\n');
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
      body: JSON.stringify({
        name: 'fuzz',
        permissions: ['read', 'write', 'proof:read', 'admin', 'webhook:write', 'webhook:read', 'events:read', 'operator'],
        rate_limit_rpm: 100_000,
      }),
    });
    if (res.status !== 201) throw new Error(`creating the fuzz key: ${res.status} ${await res.text()}`);
    const fuzzKey = ((await res.json()) as { api_key: { key: string } }).api_key.key;

    const seeds = seedCount(process.argv.slice(2));
    const firstSeed = Number(process.env.FUZZ_SEED ?? '1');
    const all: FuzzFigures[] = [];
    for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
      const junitPath = join(dataDir, `junit-${seed}.xml`);
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
        FUZZ_PHASES.join(','),
        '--max-examples',
        maxExamples,
        // one worker: CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch")
        '--workers',
        '1',
        '--seed',
        String(seed),
        // the key is the harness's (-H above): schemathesis 4.3 configures only basic auth, so it would otherwise also
        // generate X-API-Key and Authorization values of its own (bytes Node's HTTP parser refuses before the app
        // sees them) and count a request without its Authorization, but with the harness's X-API-Key, as accepted
        '--generation-with-security-parameters',
        'false',
        // no U+0000 in generated text: every text input refuses it with a 400 naming the field (the API description's
        // Text rule, docs/api-conventions.md), a rule JSON Schema has no keyword for
        '--generation-allow-x00',
        'false',
        '--generation-database',
        'none',
        '--report',
        'junit',
        '--report-junit-path',
        junitPath,
        '--no-color',
      ];
      process.stdout.write(`[fuzz] seed ${seed}: ${st} ${args.join(' ').replace(fuzzKey, 'ck_live_…')}\n`);
      const output = await runSchemathesis(st, args);
      let xml = '';
      try {
        xml = readFileSync(junitPath, 'utf8');
      } catch {
        throw new Error(`schemathesis wrote no report for seed ${seed}`);
      }
      const figures = { seed, ...parseRun(xml, output) };
      all.push(figures);
      process.stdout.write(`\n[fuzz] seed ${seed}: ${JSON.stringify(figures)}\n`);
    }
    process.stdout.write(`\nFuzz figures\n${figuresTable(all)}\n`);
    process.stdout.write(`${JSON.stringify(all)}\n`);
    const failed = all.some((f) => f.operations === 0 || failureCount(f) > 0);
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
