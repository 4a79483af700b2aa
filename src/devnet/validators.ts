/**
 * The devnet's validator network: 7 validator nodes in this process, each with its own keys (generated once
 * under `<dataDir>/validators/`), its own ledger and chain clients, its own state file and its own HTTP port.
 *
 *   const vn = await startDevnetValidators({ dataDir, ledgerUrl, chains, deployerKey });
 *   vn.validators      -> [{ index, url, blsPublicKey, ... }]   (listed in the devnet summary)
 *   vn.contracts       -> ProofAnchor + AccountFactory deployed with the validators' keys as the set
 *   vn.protocol        -> protocol ADI, validators' key page, execution-results data account
 *   vn.quorum          -> input of createQuorumClient, with vn.clientKey (the gateway's signing key)
 *   await vn.stop();
 *
 * Registration: the validator set is part of the ProofAnchor's init code (deploySystem, idempotent CREATE2),
 * and the validators' Ed25519 keys form page 2 of the protocol ADI's key book (threshold 1), which governs the
 * execution-results data account. Ledger setup is idempotent (checks what exists) and devnet-only: the
 * operator key is funded from the ledger faucet.
 *
 * The gateway's key for its requests to the validators (src/protocol/validator-auth.ts) is generated once as well,
 * in `<dataDir>/validators/gateway-client.json`: every node trusts its public key, and the devnet's worker signs
 * with it (config.validatorClientSeed; VALIDATOR_CLIENT_KEY / TRUSTED_GATEWAY_KEYS for processes of their own,
 * validatorAuthEnv).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { deploySystem, type ValidatorRegistration } from '../chain/deploy.js';
import type { ChainEntry, SystemContracts } from '../chain/registry.js';
import { createLedgerClient, liteIdentityUrl, tx, type HeldKey, type LedgerClient } from '../ledger/index.js';
import type { RunningServer } from '../net/server.js';
import { gatewayKeyFromSeed, newGatewayKey } from '../protocol/validator-auth.js';
import { serveValidator, type ValidatorHttpOptions } from '../validator/http.js';
import { loadOrCreateValidatorKeys, type ValidatorKeys } from '../validator/keys.js';
import { createValidatorNode, type ValidatorNode } from '../validator/node.js';
import type { QuorumValidator } from '../validator/quorum.js';
import { sleep } from '../net/sleep.js';

export interface DevnetValidatorsOptions {
  /** keys and state go under `<dataDir>/validators/` */
  dataDir: string;
  ledgerUrl: string;
  chains: readonly { name: string; chainId: number; rpcUrl: string; confirmations: number }[];
  /** funded key that deploys the system contracts (through the CREATE2 deployer) */
  deployerKey: Hex;
  /** skip deployment and use these addresses (they must have been deployed with this validator set) */
  contracts?: SystemContracts;
  count?: number;
  host?: string;
  /** first port (validator i listens on basePort + i); default: free ports chosen by the OS */
  basePort?: number;
  /** default acc://pgw-protocol.acme */
  protocolAdi?: string;
  /**
   * Ed25519 seed (hex) of the protocol operator: its lite identity is funded from the faucet and its key is
   * page 1 of the protocol ADI. Default: generated once in `<dataDir>/validators/protocol-operator.json`.
   */
  operatorSeed?: Hex;
  observeTimeoutMs?: number;
  /** the gateway's signing key (hex seed); default: generated once in `<dataDir>/validators/gateway-client.json` */
  clientKey?: string;
  /** more gateway public keys the nodes trust besides the client key's (another gateway, a key being rotated in) */
  trustedGatewayKeys?: string[];
  /** the nodes' HTTP limits (poll bound, requests in flight, body size) */
  http?: Omit<ValidatorHttpOptions, 'trustedGatewayKeys'>;
  log?: (msg: string) => void;
}

export interface DevnetValidatorInfo {
  index: number;
  url: string;
  blsPublicKey: Hex;
  proofOfPossession: Hex;
  ed25519PublicKey: Hex;
}

export interface ProtocolLedger {
  adiUrl: string;
  keyBook: string;
  operatorPage: string;
  validatorPage: string;
  resultsAccount: string;
}

export interface DevnetValidators {
  validators: DevnetValidatorInfo[];
  registrations: ValidatorRegistration[];
  contracts: SystemContracts;
  protocol: ProtocolLedger;
  /** for createQuorumClient({ validators: quorum, clientKey }) */
  quorum: QuorumValidator[];
  /** secret: the gateway's Ed25519 seed (hex) the nodes trust; the devnet's worker signs its requests with it */
  clientKey: string;
  /** the public keys (hex) every node trusts: the client key's first */
  trustedGatewayKeys: string[];
  nodes: ValidatorNode[];
  /** stop one validator's HTTP server (tests: simulate an outage) */
  stopValidator(index: number): Promise<void>;
  /** start it again on the same port */
  startValidator(index: number): Promise<void>;
  stop(): Promise<void>;
}

interface OperatorKey {
  seed: Hex;
}

function loadOrCreateOperator(dir: string): OperatorKey {
  const file = join(dir, 'protocol-operator.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as OperatorKey;
  mkdirSync(dir, { recursive: true });
  const k = { seed: bytesToHex(randomBytes(32)) };
  writeFileSync(file, JSON.stringify(k, null, 2), { mode: 0o600 });
  return k;
}

/** The devnet gateway's key for its requests to the validators, made on first use (mode 0600). */
export function loadOrCreateGatewayClientKey(dir: string): string {
  const file = join(dir, 'gateway-client.json');
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { seed: string }).seed;
  mkdirSync(dir, { recursive: true });
  const k = newGatewayKey();
  writeFileSync(file, JSON.stringify({ seed: k.seedHex, publicKey: k.publicKey }, null, 2), { mode: 0o600 });
  return k.seedHex;
}

/** The environment of a gateway worker and of validator processes (src/bin/validator.ts) of this network. */
export function validatorAuthEnv(vn: Pick<DevnetValidators, 'clientKey' | 'trustedGatewayKeys'>): {
  VALIDATOR_CLIENT_KEY: string;
  TRUSTED_GATEWAY_KEYS: string;
} {
  return { VALIDATOR_CLIENT_KEY: vn.clientKey, TRUSTED_GATEWAY_KEYS: vn.trustedGatewayKeys.join(',') };
}

async function settle(ledger: LedgerClient, p: Promise<{ txId: string }>, what: string) {
  const r = await p;
  const st = await ledger.waitForTransaction(r.txId, { timeoutMs: 30_000 });
  if (!st.delivered) throw new Error(`${what}: ${st.status} ${st.error?.message ?? ''}`);
  return st;
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Idempotently sets up the protocol ADI on the ledger: ADI + book + operator page 1, validators' page 2
 * (their Ed25519 keys, threshold 1) with credits, and the execution-results data account.
 */
export async function setupProtocolLedger(p: {
  ledger: LedgerClient;
  operatorSeed: Hex;
  validatorKeyHashes: readonly Hex[];
  adiUrl?: string;
  log?: (msg: string) => void;
}): Promise<ProtocolLedger> {
  const { ledger } = p;
  const log = p.log ?? (() => {});
  const adiUrl = p.adiUrl ?? 'acc://pgw-protocol.acme';
  const keyBook = `${adiUrl}/book`;
  const operatorPage = `${keyBook}/1`;
  const validatorPage = `${keyBook}/2`;
  const resultsAccount = `${adiUrl}/execution-results`;
  const seed = hexToBytes(p.operatorSeed);
  const pub = ed25519.getPublicKey(seed);
  const lite = liteIdentityUrl(pub);
  const lta = `${lite}/ACME`;
  const liteKey: HeldKey = { privateKey: seed, signerUrl: lite };
  const opKey: HeldKey = { privateKey: seed, signerUrl: operatorPage };

  const buyCredits = async (recipient: string, credits: number) => {
    const acct = await ledger.tryQueryAccount(lta);
    const { amount, oracle } = await ledger.acmeForCredits(credits);
    if (!acct || BigInt(acct.balance ?? '0') < amount) {
      await ledger.faucet(lta);
      await until('faucet', async () => BigInt((await ledger.tryQueryAccount(lta))?.balance ?? '0') >= amount);
    }
    await settle(ledger, ledger.signAndSubmit(lta, tx.addCredits({ recipient, amount, oracle }), liteKey), `credits for ${recipient}`);
  };
  const credits = async (url: string) => (await ledger.tryQueryAccount(url))?.creditBalance ?? 0;

  if (!(await ledger.tryQueryAccount(adiUrl))) {
    log(`creating protocol ADI ${adiUrl}`);
    if ((await credits(lite)) < 100_000) await buyCredits(lite, 20_000);
    await until('lite credits', async () => (await credits(lite)) > 0);
    await settle(
      ledger,
      ledger.signAndSubmit(adiUrl, tx.createIdentity({ url: adiUrl, keyBookUrl: keyBook, publicKeyHash: sha256(pub) }), liteKey),
      'create protocol ADI',
    );
  }
  if ((await credits(operatorPage)) < 500_000) {
    await buyCredits(operatorPage, 20_000);
    await until('operator credits', async () => (await credits(operatorPage)) >= 500_000);
  }
  const hashes = p.validatorKeyHashes.map((h) => h.toLowerCase().replace(/^0x/, ''));
  const vp = await ledger.tryQueryAccount(validatorPage);
  if (!vp) {
    log(`creating validators' key page ${validatorPage}`);
    await settle(ledger, ledger.signAndSubmit(keyBook, tx.createKeyPage(hashes), opKey), 'create validator key page');
  } else {
    const page = await ledger.queryKeyPage(validatorPage);
    const have = new Set(page.keys.map((k) => k.publicKeyHash?.toLowerCase()));
    const missing = hashes.filter((h) => !have.has(h));
    if (missing.length) {
      await settle(
        ledger,
        ledger.signAndSubmit(validatorPage, tx.updateKeyPage(missing.map((h) => ({ type: 'addKey' as const, publicKeyHash: h }))), opKey),
        'add validator keys',
      );
    }
  }
  if ((await credits(validatorPage)) < 1_000_000) {
    await buyCredits(validatorPage, 50_000);
    await until('validator page credits', async () => (await credits(validatorPage)) >= 1_000_000);
  }
  if (!(await ledger.tryQueryAccount(resultsAccount))) {
    log(`creating execution-results account ${resultsAccount}`);
    await settle(ledger, ledger.signAndSubmit(adiUrl, tx.createDataAccount({ url: resultsAccount }), opKey), 'create execution-results account');
  }
  return { adiUrl, keyBook, operatorPage, validatorPage, resultsAccount };
}

export async function startDevnetValidators(o: DevnetValidatorsOptions): Promise<DevnetValidators> {
  const dir = join(o.dataDir, 'validators');
  const count = o.count ?? 7;
  const host = o.host ?? '127.0.0.1';
  const log = o.log ?? (() => {});
  const keys: ValidatorKeys[] = Array.from({ length: count }, (_, i) => loadOrCreateValidatorKeys(dir, i));
  const registrations: ValidatorRegistration[] = keys.map((k) => ({ publicKey: k.bls.publicKey, proofOfPossession: k.bls.proofOfPossession, power: 100n }));

  let contracts = o.contracts;
  if (!contracts) {
    for (const c of o.chains) {
      const d = await deploySystem({ rpcUrl: c.rpcUrl, chainId: c.chainId, privateKey: o.deployerKey, validators: registrations });
      if (contracts && (d.proofAnchor !== contracts.proofAnchor || d.accountFactory !== contracts.accountFactory)) {
        throw new Error(`system contracts on ${c.name} are at different addresses`);
      }
      contracts = { proofAnchor: d.proofAnchor, accountFactory: d.accountFactory };
      log(`system contracts on ${c.name}: ProofAnchor ${d.proofAnchor} AccountFactory ${d.accountFactory}`);
    }
  }
  if (!contracts) throw new Error('no chains to deploy to');

  const setupLedger = createLedgerClient({ url: o.ledgerUrl });
  const protocol = await setupProtocolLedger({
    ledger: setupLedger,
    operatorSeed: o.operatorSeed ? (`0x${o.operatorSeed.replace(/^0x/, '')}` as Hex) : loadOrCreateOperator(dir).seed,
    validatorKeyHashes: keys.map((k) => k.ed25519.publicKeyHash),
    adiUrl: o.protocolAdi,
    log,
  });

  const chains: ChainEntry[] = o.chains.map((c) => ({ name: c.name, chainId: c.chainId, rpcUrl: c.rpcUrl, confirmations: c.confirmations, contracts }));
  const nodes = keys.map((k) =>
    createValidatorNode({
      keys: k,
      ledger: createLedgerClient({ url: o.ledgerUrl }),
      chains,
      protocol: { keyPage: protocol.validatorPage, resultsAccount: protocol.resultsAccount },
      storeFile: join(dir, `state-${k.index}.json`),
      observeTimeoutMs: o.observeTimeoutMs,
    }),
  );
  const clientKey = o.clientKey ?? loadOrCreateGatewayClientKey(dir);
  const trustedGatewayKeys = [gatewayKeyFromSeed(clientKey).publicKey, ...(o.trustedGatewayKeys ?? [])];
  const serve = (n: ValidatorNode, port: number) => serveValidator(n, { ...o.http, trustedGatewayKeys, host, port });
  const servers: (RunningServer | undefined)[] = [];
  const ports: number[] = [];
  try {
    for (const n of nodes) {
      const s = await serve(n, o.basePort ? o.basePort + n.index : 0);
      servers[n.index] = s;
      ports[n.index] = s.port;
    }
  } catch (e) {
    await Promise.all(servers.map((s) => s?.close()));
    throw e;
  }
  const validators: DevnetValidatorInfo[] = keys.map((k) => ({
    index: k.index,
    url: `http://${host}:${ports[k.index]}`,
    blsPublicKey: k.bls.publicKey,
    proofOfPossession: k.bls.proofOfPossession,
    ed25519PublicKey: k.ed25519.publicKey,
  }));
  return {
    validators,
    registrations,
    contracts,
    protocol,
    quorum: validators.map((v) => ({ index: v.index, url: v.url, publicKey: v.blsPublicKey, power: 100n })),
    clientKey,
    trustedGatewayKeys,
    nodes,
    async stopValidator(i) {
      await servers[i]?.close();
      servers[i] = undefined;
    },
    async startValidator(i) {
      if (servers[i]) return;
      servers[i] = await serve(nodes[i]!, ports[i]!);
    },
    async stop() {
      await Promise.all(servers.map((s) => s?.close()));
      servers.length = 0;
      for (const n of nodes) n.close();
    },
  };
}

/** Rows for the devnet summary: one per validator, plus the protocol ledger accounts. */
export function validatorSummaryRows(vn: Pick<DevnetValidators, 'validators' | 'protocol' | 'contracts'>): [string, string][] {
  return [
    ...vn.validators.map((v) => [`Validator ${v.index}`, `${v.url} (BLS key …${v.blsPublicKey.slice(-16)})`] as [string, string]),
    ['Validator key page', vn.protocol.validatorPage],
    ['Execution results', vn.protocol.resultsAccount],
    ['ProofAnchor', vn.contracts.proofAnchor],
    ['AccountFactory', vn.contracts.accountFactory],
  ];
}
