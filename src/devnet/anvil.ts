/**
 * Spawns a local anvil (the binary shipped in the npm package @foundry-rs/anvil) for the devnet and tests.
 *
 *   const chain = await startAnvil({ chainId: 11155111 });   // port 0 = a free port
 *   ... chain.rpcUrl ...
 *   await chain.stop();
 *
 * Flags: --hardfork prague (EIP-2537 as on Sepolia and Amoy), --mixed-mining --block-time 0.2 (transactions
 * are mined at once and blocks keep coming, so `finalized` advances), --slots-in-an-epoch 1 (finalized =
 * latest - 2). Readiness is polled with eth_chainId; stop() sends SIGTERM, then SIGKILL after 3 s, and
 * resolves once the process has exited; if the parent exits without stop(), the child is killed on 'exit'.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';

export interface AnvilOptions {
  chainId: number;
  /** 0 (default) picks a free port */
  port?: number;
  host?: string;
  /** seconds between blocks in mixed mining; default 0.2. 0 disables interval mining (automine only). */
  blockTime?: number;
  /** default 'prague' (EIP-2537); tests use others to check the precompile guard */
  hardfork?: string;
  /** extra CLI flags */
  extraArgs?: string[];
  /** readiness timeout in ms, default 15000 */
  timeoutMs?: number;
}

export interface AnvilInstance {
  rpcUrl: string;
  chainId: number;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  return require.resolve('@foundry-rs/anvil-linux-amd64/bin/anvil');
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function rpcChainId(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as { result?: string };
    return body.result ? Number(BigInt(body.result)) : undefined;
  } catch {
    return undefined;
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startAnvil(opts: AnvilOptions): Promise<AnvilInstance> {
  const host = opts.host ?? '127.0.0.1';
  const blockTime = opts.blockTime ?? 0.2;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let attempts = opts.port ? 1 : 3; // a picked free port can be raced; retry with another
  for (;;) {
    const port = opts.port || (await freePort(host));
    const args = [
      '--chain-id', String(opts.chainId),
      '--port', String(port),
      '--host', host,
      '--hardfork', opts.hardfork ?? 'prague',
      '--slots-in-an-epoch', '1',
      ...(blockTime > 0 ? ['--mixed-mining', '--block-time', String(blockTime)] : []),
      ...(opts.extraArgs ?? []),
    ];
    const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const rpcUrl = `http://${host}:${port}`;
    // if this process exits without stop() (crash, test runner killed), take the child down with it
    const onExit = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    process.once('exit', onExit);
    child.once('exit', () => process.removeListener('exit', onExit));
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = exited(child);
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await done;
      clearTimeout(t);
    };
    const deadline = Date.now() + timeoutMs;
    let ready = false;
    while (Date.now() < deadline && child.exitCode === null) {
      const id = await rpcChainId(rpcUrl);
      if (id !== undefined) {
        if (id !== opts.chainId) {
          await stop();
          throw new Error(`anvil at ${rpcUrl} reports chain id ${id}, expected ${opts.chainId} (port taken?)`);
        }
        ready = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    if (ready) return { rpcUrl, chainId: opts.chainId, port, pid: child.pid!, stop };
    await stop();
    if (--attempts <= 0) throw new Error(`anvil did not become ready on ${rpcUrl}: ${stderr.trim()}`);
  }
}
