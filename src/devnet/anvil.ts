/** A local EVM chain: the anvil binary shipped in the npm package @foundry-rs/anvil. */
import { createRequire } from 'node:module';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from './ports.js';
import { rpcAnswersChainId, spawnManaged, waitUntilReady } from './process.js';

export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json'));
  const bin = join(pkg, 'bin', 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}; run npm ci`);
  return bin;
}

export interface AnvilHandle {
  rpcUrl: string;
  chainId: number;
  port: number;
  /** process id of the anvil process */
  pid: number;
  stop(): Promise<void>;
}

export async function startAnvil(opts: {
  chainId: number;
  port?: number;
  host?: string;
  /** seconds between empty blocks; transactions are mined at once regardless (mixed mining); 0 = automine only */
  blockTime?: number;
  logFile?: string;
  /** default 'prague' (EIP-2537) */
  hardfork?: string;
  /**
   * Keep the chain across restarts: load this file at start when it exists, dump to it on exit (anvil --state) and
   * every `stateIntervalSeconds` while running, so even a killed devnet loses at most that much.
   */
  stateFile?: string;
  /** default 5 (only with stateFile) */
  stateIntervalSeconds?: number;
  /** extra CLI flags */
  extraArgs?: string[];
  /** readiness timeout in ms, default 20000 */
  timeoutMs?: number;
}): Promise<AnvilHandle> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port || (await freePort(host));
  const args = [
    '--chain-id',
    String(opts.chainId),
    '--host',
    host,
    '--port',
    String(port),
    '--hardfork',
    opts.hardfork ?? 'prague',
    ...((opts.blockTime ?? 0.2) > 0 ? ['--mixed-mining', '--block-time', String(opts.blockTime ?? 0.2)] : []),
    '--slots-in-an-epoch',
    '1',
    ...(opts.stateFile ? ['--state', opts.stateFile, '--state-interval', String(opts.stateIntervalSeconds ?? 5)] : []),
    ...(opts.extraArgs ?? []),
  ];
  if (opts.stateFile) mkdirSync(dirname(opts.stateFile), { recursive: true });
  const proc = spawnManaged(`anvil-${opts.chainId}`, anvilBinary(), args, { logFile: opts.logFile });
  const rpcUrl = `http://${host}:${port}`;
  try {
    await waitUntilReady(`anvil (chain ${opts.chainId}) on ${rpcUrl}`, () => rpcAnswersChainId(rpcUrl, opts.chainId), {
      process: proc,
      timeoutMs: opts.timeoutMs ?? 20_000,
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { rpcUrl, chainId: opts.chainId, port, pid: proc.child.pid!, stop: () => proc.stop() };
}

/** Alias used by the chain tests. */
export type AnvilInstance = AnvilHandle;
