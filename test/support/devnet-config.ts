/**
 * A devnet (`startDevnet`, what `npm start` runs) on free ports in `dataDir`: its configuration and the Temporal
 * dev server's ports. Shared by the launcher, restart and log-hygiene tests.
 */
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../src/devnet/ports.js';

export async function freePortDevnet(dataDir: string, env: Record<string, string | undefined> = {}) {
  const [p1, p2, tp, ui, lp] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const config = loadConfig({
    API_PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    LEDGER_URL: `http://127.0.0.1:${lp}`,
    CHAINS: JSON.stringify([
      { name: 'ethereum-sepolia', chainId: 11155111, rpcUrl: `http://127.0.0.1:${p1}` },
      { name: 'polygon-amoy', chainId: 80002, rpcUrl: `http://127.0.0.1:${p2}` },
    ]),
    ...env,
  });
  return { config, temporalProfile: { port: tp, uiPort: ui } };
}
