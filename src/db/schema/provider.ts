/**
 * Provider signing: the key the gateway holds for an identity (envelope-encrypted: src/identity/provider-keys.ts),
 * the one-shot retrieval of its mnemonic, and the native value the gateway signed for per chain (the policy's
 * rolling 24-hour limit).
 */
import { index, numeric, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';
import { identities } from './identities.js';

export const providerKeys = pgTable('provider_keys', {
  identityId: uuid('identity_id')
    .primaryKey()
    .references(() => identities.id),
  /** hex Ed25519 public key of the held key (the identity's key while it is provider-signed) */
  publicKey: text('public_key').notNull(),
  /** id of the KEK that wraps the data key (the KEK itself is configuration, never stored) */
  kekId: text('kek_id').notNull(),
  /** the data key, sealed by that KEK; null once the key is destroyed */
  wrappedDataKey: text('wrapped_data_key'),
  /** the private key, sealed by the data key; null once the key is destroyed */
  sealedKey: text('sealed_key'),
  createdAt: createdAt(),
  rewrappedAt: timestamp('rewrapped_at', { withTimezone: true, mode: 'date' }),
  destroyedAt: timestamp('destroyed_at', { withTimezone: true, mode: 'date' }),
});

export const mnemonicRetrievals = pgTable('mnemonic_retrievals', {
  identityId: uuid('identity_id')
    .primaryKey()
    .references(() => identities.id),
  /** hex SHA-256 of the retrieval token (the token itself is only in the creation answer) */
  tokenHash: text('token_hash').notNull(),
  /** the mnemonic, sealed by the identity's data key; null once retrieved or expired */
  sealedMnemonic: text('sealed_mnemonic'),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull(),
  retrievedAt: timestamp('retrieved_at', { withTimezone: true, mode: 'date' }),
});

export const providerSpends = pgTable(
  'provider_spends',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    identityId: uuid('identity_id')
      .notNull()
      .references(() => identities.id),
    intentId: uuid('intent_id').notNull(),
    chain: text('chain').notNull(),
    /** native value of the intent's legs on this chain, base units (wei) */
    value: numeric('value', { precision: 78, scale: 0 }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('provider_spends_identity_chain_idx').on(t.identityId, t.chain, t.createdAt)],
);
