/** `npm start`: the whole gateway on its embedded defaults. */
import { ConfigError, loadDevnetConfig } from '../config.js';
import { formatSummary, startDevnet } from '../devnet/index.js';
import { createLogger } from '../log.js';

async function main() {
  let config: ReturnType<typeof loadDevnetConfig>;
  try {
    config = loadDevnetConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, { process: 'devnet' });
  const started = Date.now();
  const devnet = await startDevnet(config, logger);
  process.stdout.write(`${formatSummary(devnet.summary)}  (started in ${((Date.now() - started) / 1000).toFixed(1)} s)\n\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping devnet', { signal });
    await devnet.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(`devnet failed to start: ${(err as Error).message}`);
  process.exit(1);
});
