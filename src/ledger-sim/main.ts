/**
 * Run the ledger simulator standalone:
 *   tsx src/ledger-sim/main.ts [port] [stateFile] [blockIntervalMs]
 * e.g. tsx src/ledger-sim/main.ts 26660 .data/ledger-sim.json
 * Prints the JSON-RPC endpoint on stdout as `ledger-sim listening <url>/v3`.
 */
import { startLedgerSim } from './index.js';

const [portArg, stateFile, intervalArg] = process.argv.slice(2);
const port = portArg ? Number(portArg) : 0;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`usage: main.ts [port] [stateFile] [blockIntervalMs] (bad port ${portArg})`);
  process.exit(2);
}
const sim = await startLedgerSim({
  port,
  stateFile: stateFile || undefined,
  blockIntervalMs: intervalArg ? Number(intervalArg) : undefined,
});
console.log(`ledger-sim listening ${sim.endpoint}`);
const shutdown = async () => {
  await sim.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
