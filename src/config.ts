/**
 * The one place that reads the environment. Every other module receives a typed `Config` (or a slice of it).
 * A wrong value stops start-up with a message that names the variable.
 */
import { delimiter } from 'node:path';
import { z } from 'zod';
import { registerSecretUrls } from './net/redact.js';
import { parseKekList, type Kek } from './identity/provider-keys.js';
import { parseAllowEntry, type PrivateUrls } from './webhooks/url.js';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url();

export const chainSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'chain name must be lowercase letters, digits and dashes'),
  chainId: z.number().int().positive(),
  rpcUrl: url,
  /** blocks to wait after inclusion before an execution counts as final */
  confirmations: z.number().int().min(0).default(2),
  /** most blocks one eth_getLogs call may span (the RPC provider's limit) */
  logRangeBlocks: z.number().int().min(1).optional(),
  /** system contracts (same address on every chain: CREATE2); the devnet fills these in after deploying */
  contracts: z
    .object({
      proofAnchor: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address'),
      accountFactory: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address'),
    })
    .optional(),
});
export type ChainConfig = z.infer<typeof chainSchema>;

/** The local devnet registry: two anvil chains with the ids of the public testnets they stand in for. */
export const DEVNET_CHAINS: ChainConfig[] = [
  { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: 'http://127.0.0.1:8545', confirmations: 2 },
  { name: 'polygon-amoy', chainId: 80002, rpcUrl: 'http://127.0.0.1:8546', confirmations: 2 },
];

const chainList = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {name, chainId, rpcUrl, confirmations}' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(chainSchema)
      .min(1)
      .refine((cs) => new Set(cs.map((c) => c.name)).size === cs.length, 'chain names must be unique')
      .refine((cs) => new Set(cs.map((c) => c.chainId)).size === cs.length, 'chain ids must be unique'),
  );

const commaList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(url));

const envSchema = z.object({
  GATEWAY_ENV: z.enum(['devnet', 'production']).default('devnet'),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(8080),
  PUBLIC_BASE_URL: url.optional(),
  API_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(400).default(30),
  SHUTDOWN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(15 * 60_000)
    .default(10_000),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('gateway'),
  /** the Temporal Web UI operators should open: shown in the devnet summary (instead of the dev server's) and logged at api/worker start */
  TEMPORAL_UI_URL: url.optional(),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  CHAINS: chainList.optional(),
  LEDGER_URL: url.default('http://127.0.0.1:26660'),
  VALIDATOR_URLS: commaList.default([]),
  /** Ed25519 seed (64 hex) the gateway signs its requests to the validators with; their TRUSTED_GATEWAY_KEYS hold its public key */
  VALIDATOR_CLIENT_KEY: z
    .string()
    .regex(/^(0x)?[0-9a-fA-F]{64}$/, 'must be 32 bytes of hex')
    .optional(),
  /** a validator's trusted gateway public keys (comma list of 64 hex): several during a key rotation */
  TRUSTED_GATEWAY_KEYS: z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, 'each key must be 32 bytes of hex')))
    .default([]),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** ADI URLs are acc://<name>.<suffix> */
  ADI_SUFFIX: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'lowercase letters, digits and dashes')
    .default('acme'),
  INTENT_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
  /**
   * Key-encryption keys of provider-signing identities: `id:base64key,...` (32-byte keys), the first wraps new data
   * keys, the others still open what they wrapped (rotation). Unset: provider signing is off (the devnet generates one)
   */
  PROVIDER_KEKS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined) return;
      try {
        parseKekList(v);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  /** how long the one-shot mnemonic retrieval URL of a provider identity stays valid */
  MNEMONIC_RETRIEVAL_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Ed25519 secret seed (64 hex) of the sponsor that creates and funds ADIs; the devnet generates one */
  SPONSOR_KEY: z
    .string()
    .regex(/^(0x)?[0-9a-fA-F]{64}$/, 'must be 32 bytes of hex')
    .optional(),
  /** secp256k1 private key (0x + 64 hex) paying gas for deployments and proof transactions on every chain */
  RELAYER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex digits')
    .optional(),
  RATE_LIMIT_DEFAULT_RPM: z.coerce.number().int().min(1).max(1_000_000).default(60),
  RATE_LIMIT_IP_RPM: z.coerce.number().int().min(1).max(1_000_000).default(60),
  TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  /** proxies in front of the API that append to X-Forwarded-For: the client is that many entries from the right */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
  /** most API keys (not revoked, not expired) one organization may hold */
  MAX_API_KEYS_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(50),
  SANDBOX_IDENTITY_QUOTA: z.coerce.number().int().min(0).max(1_000_000).default(5),
  SANDBOX_CREDIT_GRANT: z.coerce.bigint().min(0n).default(10_000n),
  /** self-service sign-ups (each with the sandbox grant) the whole gateway accepts per rolling hour; 0 turns sign-up off */
  SIGNUP_MAX_PER_HOUR: z.coerce.number().int().min(0).max(1_000_000).default(100),
  /** seconds to wait before each retry after the first attempt (comma list); default ≈ 3 days in total */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, 'must be a comma-separated list of seconds')
    .transform((s) => s.split(',').map((x) => Number(x.trim())))
    .optional(),
  /** an endpoint failing continuously for this many seconds is disabled (default 5 days) */
  WEBHOOK_DISABLE_AFTER: z.coerce
    .number()
    .positive()
    .default(5 * 24 * 3600),
  /** per-attempt request timeout */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
  /** how often the dispatcher looks for undelivered events when nobody nudges it */
  WEBHOOK_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(50).default(5_000),
  /** opt-in: let webhook URLs be (or resolve to) loopback addresses (the devnet runner and tests set it) */
  WEBHOOK_ALLOW_PRIVATE_URLS: z.enum(['true', 'false']).default('false'),
  /**
   * with WEBHOOK_ALLOW_PRIVATE_URLS: the private receivers allowed besides loopback, comma-separated IP addresses,
   * CIDRs or host names (e.g. `10.0.5.0/24,receiver.internal`). Empty: loopback only.
   */
  WEBHOOK_PRIVATE_URL_ALLOWLIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every((x) => parseAllowEntry(x) !== undefined), {
      message: 'each entry must be an IP address, a CIDR (10.0.5.0/24) or a host name',
    }),
  /** webhook endpoints one organization may have (not counting deleted ones) */
  WEBHOOK_MAX_ENDPOINTS_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(20),
  /** webhook attempts (HTTP posts to receivers) one worker process runs at once, on their own task queue */
  WEBHOOK_MAX_CONCURRENT_ATTEMPTS: z.coerce.number().int().min(1).max(1_000).default(20),
  /** how often pending discovery scans the ledger for transactions awaiting the organizations' signatures */
  PENDING_SCAN_INTERVAL_SECONDS: z.coerce.number().int().min(5).max(86_400).default(45),
});

/** Standard Webhooks' suggested schedule after the immediate first attempt: 5 s … 24 h, ≈ 75.5 h in total. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

export interface WebhookSettings {
  retryScheduleSeconds: number[];
  disableAfterSeconds: number;
  timeoutMs: number;
  dispatchIntervalMs: number;
  /**
   * private receivers allowed: none (false, the default in every env), loopback only (true: WEBHOOK_ALLOW_PRIVATE_URLS),
   * or loopback and the hosts/CIDRs of WEBHOOK_PRIVATE_URL_ALLOWLIST
   */
  allowPrivateUrls: PrivateUrls;
  /** webhook endpoints one organization may have at once */
  maxEndpointsPerOrg: number;
  /** webhook attempts one worker process runs at once (the `<task queue>-webhooks` worker's activity slots) */
  maxConcurrentAttempts: number;
}

export interface Config {
  env: 'devnet' | 'production';
  api: {
    host: string;
    port: number;
    publicBaseUrl: string;
    /** V8's old-space growth over the live heap after a full GC, in percent (0: V8's own heuristics) */
    heapGrowingPercent: number;
  };
  /** on SIGTERM/SIGINT: how long API requests and worker activities in flight may finish before they are cut */
  shutdownGraceMs: number;
  /** undefined → embedded PGlite under `${dataDir}/pglite` (one process only; refused when env is production) */
  databaseUrl?: string;
  dataDir: string;
  temporal: { address: string; namespace: string; taskQueue: string; uiUrl?: string; cliPath?: string };
  chains: ChainConfig[];
  ledgerUrl: string;
  validatorUrls: string[];
  /** secret: the gateway's Ed25519 seed (hex) for its requests to the validators (VALIDATOR_CLIENT_KEY) */
  validatorClientSeed?: string;
  /** a validator's trusted gateway public keys (TRUSTED_GATEWAY_KEYS) */
  trustedGatewayKeys: string[];
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  webhooks: WebhookSettings;
  adiSuffix: string;
  /** seconds between pending-discovery scans (the Temporal Schedule's interval) */
  pendingScanIntervalSeconds: number;
  /** an unsigned intent (and its ledger transaction) expires this long after prepare */
  intentTtlSeconds: number;
  /** provider signing: the KEKs (first: current; none: provider signing is off) and the mnemonic URL's lifetime */
  provider: { keks: Kek[]; mnemonicTtlSeconds: number };
  /** secrets: never logged, never returned */
  sponsorKey?: string;
  relayerPrivateKey?: `0x${string}`;
  platform: PlatformConfig;
}

/** API platform settings: rate limits and the sandbox grant of a new (self-service) organization. */
export interface PlatformConfig {
  /** requests per minute of a new API key when none is given, and of the bootstrap/portal keys */
  defaultRpm: number;
  /** requests per minute per client IP for calls without a valid key */
  ipRpm: number;
  /** take the client IP from X-Forwarded-For (only behind a proxy that sets it) */
  trustProxy: boolean;
  /** with trustProxy: the client IP is the X-Forwarded-For entry this many from the right (each trusted proxy appends one) */
  trustProxyHops: number;
  /** most active (not revoked, not expired) API keys per organization; creating one more is refused */
  maxKeysPerOrg: number;
  sandbox: { identityQuota: number; creditGrant: bigint };
  /** self-service sign-ups accepted across all API processes in any rolling hour; 0: sign-up is off */
  signupMaxPerHour: number;
}

export class ConfigError extends Error {
  constructor(
    readonly problems: { variable: string; message: string }[],
    heading = 'Invalid configuration',
  ) {
    super(`${heading}:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parse the environment (process.env by default). Throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "unset", as in most .env tooling.
  const cleaned = Object.fromEntries(Object.keys(envSchema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const parsed = envSchema.safeParse(cleaned);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({
        variable: String(i.path[0] ?? '(environment)'),
        message: i.path.length > 1 ? `${i.path.slice(1).join('.')}: ${i.message}` : i.message,
      }));
  // Without DATABASE_URL each process opens its own embedded PGlite under DATA_DIR: an API and a worker process
  // (or two API replicas) would each see only their own rows. Production runs them apart, so it needs Postgres.
  if (cleaned.GATEWAY_ENV === 'production' && cleaned.DATABASE_URL === undefined) {
    problems.push({
      variable: 'DATABASE_URL',
      message: 'required when GATEWAY_ENV=production (a postgres:// URL shared by every API and worker process; embedded PGlite is for the devnet only)',
    });
  }
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  const chains = e.CHAINS ?? DEVNET_CHAINS;
  // their paths and queries may hold provider keys: masked wherever a URL reaches a log line or an API answer
  registerSecretUrls([...chains.map((c) => c.rpcUrl), e.LEDGER_URL, ...e.VALIDATOR_URLS]);
  return {
    env: e.GATEWAY_ENV,
    api: {
      host: e.API_HOST,
      port: e.API_PORT,
      publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${e.API_HOST}:${e.API_PORT}`,
      heapGrowingPercent: e.API_HEAP_GROWING_PERCENT,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiUrl: e.TEMPORAL_UI_URL,
      cliPath: e.TEMPORAL_CLI_PATH,
    },
    chains,
    ledgerUrl: e.LEDGER_URL,
    validatorUrls: e.VALIDATOR_URLS,
    validatorClientSeed: e.VALIDATOR_CLIENT_KEY?.replace(/^0x/, ''),
    trustedGatewayKeys: e.TRUSTED_GATEWAY_KEYS,
    logLevel: e.LOG_LEVEL,
    webhooks: {
      retryScheduleSeconds: e.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE,
      disableAfterSeconds: e.WEBHOOK_DISABLE_AFTER,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      dispatchIntervalMs: e.WEBHOOK_DISPATCH_INTERVAL_MS,
      allowPrivateUrls:
        e.WEBHOOK_ALLOW_PRIVATE_URLS !== 'true' ? false : e.WEBHOOK_PRIVATE_URL_ALLOWLIST.length > 0 ? { allow: e.WEBHOOK_PRIVATE_URL_ALLOWLIST } : true,
      maxEndpointsPerOrg: e.WEBHOOK_MAX_ENDPOINTS_PER_ORG,
      maxConcurrentAttempts: e.WEBHOOK_MAX_CONCURRENT_ATTEMPTS,
    },
    adiSuffix: e.ADI_SUFFIX,
    pendingScanIntervalSeconds: e.PENDING_SCAN_INTERVAL_SECONDS,
    intentTtlSeconds: e.INTENT_TTL_SECONDS,
    provider: { keks: e.PROVIDER_KEKS ? parseKekList(e.PROVIDER_KEKS) : [], mnemonicTtlSeconds: e.MNEMONIC_RETRIEVAL_TTL_SECONDS },
    sponsorKey: e.SPONSOR_KEY?.replace(/^0x/, ''),
    relayerPrivateKey: e.RELAYER_PRIVATE_KEY as `0x${string}` | undefined,
    platform: {
      defaultRpm: e.RATE_LIMIT_DEFAULT_RPM,
      ipRpm: e.RATE_LIMIT_IP_RPM,
      trustProxy: e.TRUST_PROXY === 'true',
      trustProxyHops: e.TRUST_PROXY_HOPS,
      maxKeysPerOrg: e.MAX_API_KEYS_PER_ORG,
      sandbox: { identityQuota: e.SANDBOX_IDENTITY_QUOTA, creditGrant: e.SANDBOX_CREDIT_GRANT },
      signupMaxPerHour: e.SIGNUP_MAX_PER_HOUR,
    },
  };
}

/**
 * The devnet's configuration (`npm start`): its webhook receivers live on this machine, so loopback webhook URLs are
 * allowed unless the operator sets WEBHOOK_ALLOW_PRIVATE_URLS otherwise (other private receivers only when
 * WEBHOOK_PRIVATE_URL_ALLOWLIST names them).
 */
export function loadDevnetConfig(env: Record<string, string | undefined> = process.env): Config {
  return loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env });
}

const searchPath = z.string().default('');

/** The directories of PATH, where the devnet looks for the tools it starts (the Temporal CLI, python3). */
export function executableSearchPath(env: Record<string, string | undefined> = process.env): string[] {
  return searchPath.parse(env.PATH).split(delimiter).filter(Boolean);
}

/**
 * What a worker process lacks to run every activity on its task queue, one entry per variable. All workflows share
 * one task queue, so a worker without, say, the sponsor key still picks up identity workflows and its activities
 * fail forever ("needs ledger and sponsor, which this worker was started without") while identities sit in
 * `creating`. `npm run worker` refuses to start with these; the programmatic API (createActivities) still allows
 * partial workers, which tests use for housekeeping-only runs. LEDGER_URL must be set explicitly: its default is
 * the devnet's ledger simulator. With `ownProcess` (npm run worker) DATABASE_URL is required as well.
 */
export function workerDependencyProblems(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  opts: { ownProcess?: boolean } = {},
): { variable: string; message: string }[] {
  const problems: { variable: string; message: string }[] = [];
  // A worker in its own process cannot share the API's embedded PGlite (each process would open its own copy and
  // see only its own rows); only the devnet, which runs the worker inside the API's process, may go without.
  if (opts.ownProcess && !config.databaseUrl)
    problems.push({
      variable: 'DATABASE_URL',
      message:
        'not set: a worker process needs the Postgres database the API uses (embedded PGlite cannot be shared between processes; only the devnet, API and worker in one process, runs without it)',
    });
  if (!env.LEDGER_URL)
    problems.push({
      variable: 'LEDGER_URL',
      message: `not set (the default ${config.ledgerUrl} is the devnet's ledger simulator): the Accumulate v3 endpoint identities and transactions use`,
    });
  if (!config.sponsorKey)
    problems.push({ variable: 'SPONSOR_KEY', message: 'not set: the ledger key that creates and funds identities (without it identities stay in creating)' });
  if (!config.relayerPrivateKey)
    problems.push({ variable: 'RELAYER_PRIVATE_KEY', message: 'not set: the EVM key paying gas for account deployments and proof transactions' });
  if (config.validatorUrls.length === 0) problems.push({ variable: 'VALIDATOR_URLS', message: 'empty: the validator nodes that attest every transaction' });
  if (!config.validatorClientSeed)
    problems.push({
      variable: 'VALIDATOR_CLIENT_KEY',
      message: 'not set: the Ed25519 key the worker signs its requests to the validators with (they answer only keys they trust)',
    });
  const bare = config.chains.filter((c) => !c.contracts).map((c) => c.name);
  if (!env.CHAINS)
    problems.push({
      variable: 'CHAINS',
      message:
        'not set (the default is the devnet chains, whose contracts only npm start deploys): a JSON array of chains with contracts {proofAnchor, accountFactory}',
    });
  else if (bare.length) problems.push({ variable: 'CHAINS', message: `no contracts {proofAnchor, accountFactory} for ${bare.join(', ')}` });
  return problems;
}

/**
 * Throws a ConfigError naming every variable the worker lacks (see workerDependencyProblems). For `npm run worker`,
 * a process of its own: DATABASE_URL is required too (`ownProcess: false` for a worker sharing its process's database).
 */
export function assertWorkerDependencies(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  opts: { ownProcess?: boolean } = { ownProcess: true },
): void {
  const problems = workerDependencyProblems(config, env, opts);
  if (problems.length) throw new ConfigError(problems, 'The worker cannot start: its activities need settings that are missing');
}
