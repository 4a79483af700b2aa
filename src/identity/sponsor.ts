/**
 * The sponsor: the gateway's own ledger key that creates ADIs and pays for them. It signs as a lite identity
 * (acc://<lite>), pays ACME from its lite token account (acc://<lite>/ACME) and spends its credits on
 * CreateIdentity. Built from the 32-byte Ed25519 seed in config (SPONSOR_KEY); never logged.
 */
import { keyFromSeed, liteIdentityUrl, toHex, type HeldKey } from '../ledger/index.js';

export interface Sponsor {
  /** 32-byte Ed25519 seed (secret) */
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  /** hex SHA-256 of the public key: the key hash the sponsor puts on a new ADI's page 1 */
  readonly publicKeyHash: string;
  /** acc://<lite identity> */
  readonly liteIdentity: string;
  /** acc://<lite identity>/ACME */
  readonly liteTokenAccount: string;
  /** signing as the lite identity (CreateIdentity, AddCredits) */
  asLite(): HeldKey;
  /** signing as key page `pageUrl` on which the sponsor key sits (setup of a new ADI) */
  asPage(pageUrl: string): HeldKey;
}

export function createSponsor(seedHex: string | Uint8Array): Sponsor {
  const seed = typeof seedHex === 'string' ? Uint8Array.from(Buffer.from(seedHex.replace(/^0x/, ''), 'hex')) : seedHex;
  if (seed.length !== 32) throw new Error('sponsor key: expected a 32-byte Ed25519 seed');
  const key = keyFromSeed(seed);
  const publicKey = key.address.publicKey;
  const liteIdentity = liteIdentityUrl(publicKey);
  const sponsor: Sponsor = {
    seed,
    publicKey,
    publicKeyHash: toHex(key.address.publicKeyHash),
    liteIdentity,
    liteTokenAccount: `${liteIdentity}/ACME`,
    asLite: () => ({ privateKey: seed, signerUrl: liteIdentity }),
    asPage: (pageUrl) => ({ privateKey: seed, signerUrl: pageUrl }),
  };
  // keep the seed out of JSON.stringify / util.inspect of the object
  Object.defineProperty(sponsor, 'seed', { enumerable: false });
  return sponsor;
}
