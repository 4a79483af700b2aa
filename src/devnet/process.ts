/**
 * Child processes of the devnet. Each child gets its own process group so that stopping it also stops whatever it
 * spawned; a last-resort exit hook kills every group still alive, so Ctrl-C never leaves orphans.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { readChainId } from '../chain/rpc.js';
import { sleep } from '../net/sleep.js';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  /** resolves with the exit code once the process has exited */
  exited: Promise<number | null>;
  /** the last lines it wrote to stderr, for the error when it dies at start-up */
  outputTail(): string;
  stop(): Promise<void>;
}

const alive = new Set<ManagedProcess>();
let exitHookInstalled = false;

function killGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export function spawnManaged(
  name: string,
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; logFile?: string } = {},
): ManagedProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const p of alive) killGroup(p.child.pid, 'SIGKILL');
    });
  }
  let out: NodeJS.WritableStream | undefined;
  if (opts.logFile) {
    mkdirSync(dirname(opts.logFile), { recursive: true });
    out = createWriteStream(opts.logFile, { flags: 'a' });
  }
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env, // undefined: the parent's environment
    detached: true,
    // stdout only when it is logged (anvil writes a line per RPC call); stderr always, for its last words
    stdio: ['ignore', out ? 'pipe' : 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr?.on('data', (d: Buffer) => void (tail = (tail + d.toString()).slice(-4000)));
  if (out) {
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
  }
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  const managed: ManagedProcess = {
    name,
    child,
    exited,
    outputTail: () => tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      alive.delete(managed);
    },
  };
  alive.add(managed);
  void exited.then(() => alive.delete(managed));
  return managed;
}

/**
 * Poll `probe` until it resolves true; fails early if the process exits, and after `timeoutMs`.
 * Readiness is always observed, never assumed after a fixed sleep.
 */
export async function waitUntilReady(
  what: string,
  probe: () => Promise<boolean>,
  opts: { timeoutMs?: number; intervalMs?: number; process?: ManagedProcess } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let exited = false;
  void opts.process?.exited.then(() => (exited = true));
  let lastError = '';
  while (Date.now() < deadline) {
    if (exited) {
      // its last words may still be in the pipes: wait for them to close (briefly; a grandchild may hold them)
      const child = opts.process!.child;
      if (child.stdout?.readable || child.stderr?.readable) await Promise.race([new Promise((r) => child.once('close', r)), sleep(500)]);
      const said = opts.process!.outputTail().trim().split('\n').slice(-5).join(' | ');
      throw new Error(`${what} exited before it became ready (exit code ${opts.process?.child.exitCode})${said ? `: ${said}` : ''}`);
    }
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await sleep(opts.intervalMs ?? 100);
  }
  throw new Error(`${what} was not ready within ${opts.timeoutMs ?? 30_000} ms${lastError ? `: ${lastError}` : ''}`);
}

/** Resolves true once a JSON-RPC endpoint answers eth_chainId with `chainId`. */
export async function rpcAnswersChainId(rpcUrl: string, chainId: number): Promise<boolean> {
  return (await readChainId(rpcUrl, 1000)) === chainId;
}
