/**
 * In-process Accumulate simulator serving v3 JSON-RPC at `<url>/v3`.
 *
 *   const sim = await startLedgerSim({ port: 0 });
 *   const ledger = createLedgerClient({ url: sim.url });
 *   ...
 *   await sim.stop();
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { SimLedger, type LedgerState, type SimGlobals } from './ledger.js';
import { SimRpc, createRpcServer } from './server.js';

export interface LedgerSimOptions {
  /** 0 = random free port (default) */
  port?: number;
  host?: string;
  /** JSON file the state is loaded from and saved to (e.g. .data/ledger-sim.json) */
  stateFile?: string;
  /** block interval; default 50 ms */
  blockIntervalMs?: number;
  /** network globals overrides (oracle price, faucet amount, pending TTL, identity fees) */
  globals?: Partial<SimGlobals>;
}

export interface LedgerSimHandle {
  /** base URL, e.g. http://127.0.0.1:40123 — the JSON-RPC endpoint is `${url}/v3` */
  url: string;
  /** JSON-RPC endpoint `${url}/v3` */
  endpoint: string;
  port: number;
  ledger: SimLedger;
  /** produce one block now (tests); returns the new height */
  step(): number;
  /** write the state file now (no-op without stateFile) */
  save(): void;
  stop(): Promise<void>;
}

function loadState(file: string): LedgerState | undefined {
  if (!existsSync(file)) return undefined;
  const raw = JSON.parse(readFileSync(file, 'utf8')) as LedgerState;
  if (raw.version !== 1) throw new Error(`ledger-sim: unsupported state file version in ${file}`);
  return raw;
}

export async function startLedgerSim(opts: LedgerSimOptions = {}): Promise<LedgerSimHandle> {
  const host = opts.host ?? '127.0.0.1';
  const state = opts.stateFile ? loadState(opts.stateFile) : undefined;
  const ledger = new SimLedger({ state, globals: opts.globals });
  const rpc = new SimRpc(ledger);
  const server = createRpcServer(rpc);
  const save = () => {
    if (!opts.stateFile) return;
    mkdirSync(dirname(opts.stateFile), { recursive: true });
    const tmp = `${opts.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(ledger.state));
    renameSync(tmp, opts.stateFile);
    ledger.markClean();
  };
  let lastSave = 0;
  const step = () => {
    const h = ledger.step();
    if (opts.stateFile && ledger.isDirty && Date.now() - lastSave > 500) {
      lastSave = Date.now();
      try {
        save();
      } catch (e) {
        console.error(`ledger-sim: cannot save state: ${(e as Error).message}`);
      }
    }
    return h;
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const timer = setInterval(() => {
    try {
      step();
    } catch (e) {
      console.error(`ledger-sim: block failed: ${(e as Error).stack ?? e}`);
    }
  }, opts.blockIntervalMs ?? 50);
  timer.unref?.();
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host}:${port}`;
  return {
    url,
    endpoint: `${url}/v3`,
    port,
    ledger,
    step,
    save,
    async stop() {
      clearInterval(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (opts.stateFile && ledger.isDirty) save();
    },
  };
}

export { SimLedger, SimError, DEFAULT_GLOBALS } from './ledger.js';
export type { SimGlobals, LedgerState, SimAccount } from './ledger.js';
