/**
 * One validator node as its own process (production: one per operator).
 *
 *   tsx src/bin/validator.ts --index 3 --proof-anchor 0x.. --account-factory 0x.. [--port 7403] [--host 127.0.0.1]
 *       [--key-file <path> | keys at <DATA_DIR>/validators/validator-<index>.json, created on first start]
 *       [--protocol-adi acc://pgw-protocol.acme]   (key page <adi>/book/2, results <adi>/execution-results)
 *       [--finality finalized|confirmations]   (default finalized: expected state is proven against the
 *                                               finalized block; `confirmations` waits for the chain's
 *                                               CHAINS[].confirmations instead, as the devnet's anvil chains do)
 *       [--max-in-flight 128]   (signed requests handled at once; more get 503 with Retry-After)
 *       [--poll-wait-ms 10000]  (the longest a request is held; unfinished work answers 202 PENDING, asked again)
 *
 * TRUSTED_GATEWAY_KEYS (required): the Ed25519 public keys (comma-separated hex) of the gateways whose signed
 * requests it answers (src/protocol/validator-auth.ts); during a rotation both the old and the new key.
 * Ledger endpoint (LEDGER_URL), chains (CHAINS) and DATA_DIR come from the gateway configuration
 * (src/config.ts). The node's BLS key must be in the ProofAnchor's validator set and its Ed25519 key on the
 * protocol key page (`npm start` does both for the devnet: src/devnet/validators.ts).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getAddress, type Address } from 'viem';
import { ConfigError, loadConfig } from '../config.js';
import { createLedgerClient } from '../ledger/index.js';
import { createLogger } from '../log.js';
import { serveValidator } from '../validator/http.js';
import { loadOrCreateValidatorKeys, loadValidatorKeys } from '../validator/keys.js';
import { createValidatorNode } from '../validator/node.js';

async function main() {
  const { values } = parseArgs({
    options: {
      index: { type: 'string' },
      'key-file': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '0' },
      'proof-anchor': { type: 'string' },
      'account-factory': { type: 'string' },
      'protocol-adi': { type: 'string', default: 'acc://pgw-protocol.acme' },
      finality: { type: 'string', default: 'finalized' },
      'max-in-flight': { type: 'string', default: '128' },
      'poll-wait-ms': { type: 'string', default: '10000' },
    },
  });
  if (values.finality !== 'finalized' && values.finality !== 'confirmations') {
    throw new Error(`--finality must be finalized or confirmations (got ${values.finality})`);
  }
  const config = loadConfig();
  if (config.trustedGatewayKeys.length === 0) {
    throw new ConfigError([
      { variable: 'TRUSTED_GATEWAY_KEYS', message: 'not set: the public keys (hex) of the gateways whose signed requests this validator answers' },
    ]);
  }
  const maxInFlight = Number(values['max-in-flight']);
  const pollWaitMs = Number(values['poll-wait-ms']);
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new Error('--max-in-flight must be a positive integer');
  if (!Number.isInteger(pollWaitMs) || pollWaitMs < 100 || pollWaitMs > 60_000) throw new Error('--poll-wait-ms must be an integer from 100 to 60000');
  const logger = createLogger(config.logLevel, { process: 'validator' });
  const index = Number(values.index);
  if (!values['key-file'] && !Number.isInteger(index)) throw new Error('--index or --key-file is required');
  if (!values['proof-anchor'] || !values['account-factory']) throw new Error('--proof-anchor and --account-factory are required');
  const keys = values['key-file'] ? loadValidatorKeys(values['key-file']) : loadOrCreateValidatorKeys(join(config.dataDir, 'validators'), index);
  const contracts = { proofAnchor: getAddress(values['proof-anchor']) as Address, accountFactory: getAddress(values['account-factory']) as Address };
  const adi = values['protocol-adi']!;
  const node = createValidatorNode({
    keys,
    ledger: createLedgerClient({ url: config.ledgerUrl }),
    chains: config.chains.map((c) => ({ ...c, contracts })),
    protocol: { keyPage: `${adi}/book/2`, resultsAccount: `${adi}/execution-results` },
    storeFile: join(config.dataDir, 'validators', `state-${keys.index}.json`),
    finality: values.finality,
  });
  const server = await serveValidator(node, {
    host: values.host,
    port: Number(values.port),
    trustedGatewayKeys: config.trustedGatewayKeys,
    maxInFlight,
    pollWaitMs,
    logger: logger.child({ index: keys.index }),
  });
  logger.info('validator running', {
    index: keys.index,
    url: server.url,
    bls_public_key: keys.bls.publicKey,
    ledger: config.ledgerUrl,
    trusted_gateway_keys: config.trustedGatewayKeys,
  });
  const stop = async () => {
    await server.close();
    node.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : `validator failed: ${(err as Error).message}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
