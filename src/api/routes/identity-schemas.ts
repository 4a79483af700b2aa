/** Schemas of the identity routes and the API view of an identity row. */
import { z } from '@hono/zod-openapi';
import { HEX64_PATTERN, resourceIdParam } from '../schemas/common.js';
import { IDENTITY_STATUSES, type ChainAccountRow, type IdentityRow } from '../../db/identities.js';

export const ChainAccountSchema = z
  .object({
    chain: z.string().openapi({ description: 'The chain, by registry id (GET /v1/chains)', example: 'polygon-amoy' }),
    chain_id: z.string().openapi({
      description: 'The same registry id as `chain` (the name Certen clients read); the numeric EVM chain id is evm_chain_id',
      example: 'polygon-amoy',
    }),
    evm_chain_id: z.number().int().openapi({ description: 'The EVM chain id', example: 80002 }),
    address: z.string().openapi({ description: 'The AbstractAccount (EIP-55): the same address on every chain' }),
    deployment_tx: z
      .string()
      .nullable()
      .openapi({ description: 'EVM transaction that deployed it (0x + 64 hex); null when it was found already deployed and its deployment was not located' }),
    deployed: z.boolean().openapi({
      description: "true: the account's code is on the chain. The gateway records a chain account only once its code is there, so a listed account is deployed",
    }),
  })
  .openapi('ChainAccount');

/** The API view of a chain account row (the row is written once the account's code is on chain). */
export function chainAccountView(a: ChainAccountRow): z.infer<typeof ChainAccountSchema> {
  return { chain: a.chain, chain_id: a.chain, evm_chain_id: Number(a.chainId), address: a.address, deployment_tx: a.deploymentTx, deployed: true };
}

export const ProviderPolicySchema = z
  .object({
    allowed_chains: z.array(z.string()).openapi({ description: 'Chain names (GET /v1/chains) a leg may run on, or ["*"]', example: ['ethereum-sepolia'] }),
    allowed_targets: z
      .array(z.string())
      .openapi({ description: 'Addresses (0x, 20 bytes) a leg may execute against (contract call target or transfer recipient), or ["*"]' }),
    max_value_per_leg: z.string().openapi({ description: 'Most native value of one leg, base units (wei), decimal string', example: '1000000000000000' }),
    max_value_per_24h: z.string().openapi({
      description:
        'Most native value per chain within any rolling 24 hours, base units (wei), decimal string; counted at prepare, exactly also under concurrent prepares',
      example: '5000000000000000',
    }),
  })
  .openapi('ProviderPolicy');

export const IdentitySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    adi_url: z.string().openapi({ example: 'acc://alice-corp.acme' }),
    book_url: z.string(),
    key_page_url: z.string(),
    data_account_url: z.string(),
    status: z.enum(IDENTITY_STATUSES).openapi({ description: 'creating → active | failed; retired after DELETE' }),
    stage: z.string().openapi({
      description:
        'Current provisioning step: queued, creating_adi, adding_credits, creating_data_account, creating_token_account, setting_key, deploying_accounts, finalizing; done once active, failed on failure',
    }),
    chain_accounts: z.array(ChainAccountSchema).openapi({ description: 'Empty while creating; one entry per deployed chain account' }),
    requested_chains: z.array(z.string()).openapi({ description: 'The chains asked for at creation and by PATCH link_chains' }),
    linking_chains: z.array(z.string()).openapi({
      description:
        "Chains being linked (PATCH link_chains): requested, the account's deployment running, not in chain_accounts yet. Empty unless the identity is active",
    }),
    credit_balance: z.number().int().openapi({
      description:
        'Whole ledger credits on the key page. GET /v1/identity/{id} reads it from the ledger for an active or retired identity; elsewhere (lists, the creation answer — 0 there — and change answers), and while the identity is creating or failed, it is the value the gateway recorded at provisioning. See credit_balance_stale',
    }),
    credit_balance_stale: z.boolean().openapi({
      description:
        'false: credit_balance was read from the ledger for this answer. true: it is the value recorded at provisioning — the answer is not a GET of one active or retired identity, or the ledger did not answer within 3 s (the request does not fail for that)',
    }),
    requested_credits: z.number().int(),
    public_key: z.string().nullable().openapi({ description: 'Ed25519 public key (64 hex); null for a hash-only identity' }),
    public_key_hash: z.string().openapi({ description: 'SHA-256 of the raw 32 key bytes (64 hex): the key on the key page' }),
    can_sign: z.boolean().openapi({
      description:
        'true when the gateway has key material for signing (external mode: a public_key was supplied). True from creation, also while provisioning; not a readiness indicator. false for a hash-only identity (repair with PATCH).',
    }),
    signing_mode: z.enum(['external', 'provider']).openapi({
      description:
        'external: the client holds the Ed25519 key and signs; provider: the gateway generated the key and holds it (envelope-encrypted), and signs within provider_policy',
    }),
    provider_policy: ProviderPolicySchema.nullable().openapi({
      description: 'Provider signing only: what the gateway signs for the identity (PATCH provider_policy, scope provider:manage); null: nothing',
    }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
    provisioned_at: z.string().nullable().openapi({ format: 'date-time' }),
    retired_at: z.string().nullable().openapi({ format: 'date-time' }),
    error_message: z.string().optional().openapi({ description: 'Present when status is failed: the reason' }),
  })
  .openapi('Identity');

export const PollingSchema = z
  .object({
    first_poll_after_seconds: z.number().int(),
    interval_seconds: z.number().int(),
    estimated_ready_in_seconds: z.number().int(),
    terminal_states: z.array(z.string()),
  })
  .openapi('PollingHints', { description: 'How to wait: first poll after, then every interval, until status is terminal' });

export const CreateBody = z
  .object({
    name: z.string().openapi({
      description:
        "ADI label: 3–63 lower-case letters, digits, dashes → acc://<name>.acme. Names short enough to carry the ledger's sliding registration fee (on the default schedule, up to 12 characters) are refused with the fee named",
      example: 'alice-corp-treasury',
    }),
    public_key: z
      .string()
      .optional()
      .openapi({ description: 'Ed25519 public key, 64 hex (send it: without it the identity cannot sign)', pattern: HEX64_PATTERN }),
    public_key_hash: z
      .string()
      .optional()
      .openapi({ description: 'SHA-256 of the raw 32 key bytes, 64 hex; must match public_key when both are sent', pattern: HEX64_PATTERN }),
    chains: z.array(z.string()).optional().openapi({ description: 'Chain names from GET /v1/chains; an account is deployed on each' }),
    credits: z.number().optional().openapi({ description: 'Whole ledger credits for the key page (0 or absent: the identity cannot submit until funded)' }),
    signing_mode: z.enum(['external', 'provider']).optional().openapi({
      description:
        "external (default): send public_key. provider: send neither key field; the gateway generates the key from a BIP-39 mnemonic (24 words, SLIP-0010 ed25519 m/44'/281'/0'/0'/0'), puts it on the key page and holds it; the answer carries mnemonic_retrieval, a URL that gives the mnemonic exactly once",
    }),
  })
  .openapi('CreateIdentityRequest', {
    description: 'public_key, or at least public_key_hash, is required; or signing_mode provider with neither',
    anyOf: [{ required: ['public_key'] }, { required: ['public_key_hash'] }, { required: ['signing_mode'] }],
  });

export const PatchBody = z
  .object({
    public_key: z
      .string()
      .optional()
      .openapi({ description: 'Ed25519 public key (64 hex) whose SHA-256 is the identity’s public_key_hash', pattern: HEX64_PATTERN }),
    provider_policy: ProviderPolicySchema.optional().openapi({
      description: 'Provider-signing identities, scope provider:manage: the whole policy, replacing the previous one',
    }),
    link_chains: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          "Chain names from GET /v1/chains: the identity's account is deployed on each it has none on yet, at the address it has on every chain (an active identity only)",
        example: ['polygon-amoy'],
      }),
  })
  .openapi('UpdateIdentityRequest', {
    description: 'At least one of public_key, link_chains and provider_policy',
    anyOf: [{ required: ['public_key'] }, { required: ['link_chains'] }, { required: ['provider_policy'] }],
  });

export const IdParam = z.object({
  id: resourceIdParam('id', { code: 'IDENTITY_NOT_FOUND', message: 'Identity not found', details: { field: 'id' } }, 'Identity id (UUID)'),
});

/** `credit`: the key page's credits read from the ledger for this answer; without it, the recorded value (stale). */
export function identityView(r: IdentityRow, accounts: ChainAccountRow[] = [], credit?: { balance: number }): z.infer<typeof IdentitySchema> {
  return {
    id: r.id,
    name: r.name,
    adi_url: r.adiUrl,
    book_url: r.bookUrl,
    key_page_url: r.keyPageUrl,
    data_account_url: r.dataAccountUrl,
    status: r.status as (typeof IDENTITY_STATUSES)[number],
    stage: r.stage,
    chain_accounts: accounts.map(chainAccountView),
    requested_chains: r.requestedChains,
    linking_chains: r.status === 'active' ? r.requestedChains.filter((ch) => !accounts.some((a) => a.chain === ch)) : [],
    credit_balance: credit ? credit.balance : Number(r.creditBalance),
    credit_balance_stale: credit === undefined,
    requested_credits: Number(r.requestedCredits),
    public_key: r.publicKey,
    public_key_hash: r.publicKeyHash,
    can_sign: r.publicKey !== null,
    signing_mode: r.signingMode === 'provider' ? 'provider' : 'external',
    provider_policy: r.signingMode === 'provider' ? ((r.providerPolicy as z.infer<typeof ProviderPolicySchema> | null) ?? null) : null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    provisioned_at: r.provisionedAt?.toISOString() ?? null,
    retired_at: r.retiredAt?.toISOString() ?? null,
    ...(r.status === 'failed' ? { error_message: r.errorMessage ?? 'provisioning failed' } : {}),
  };
}

const NativeBalanceSchema = z
  .object({
    symbol: z.string().openapi({ example: 'POL' }),
    decimals: z.number().int().openapi({ example: 18 }),
    native: z.literal(true).openapi({ description: "The chain's native currency (the only balance read)" }),
    amount: z.string().openapi({ description: 'Base units (wei), decimal string', example: '1000000000000000000' }),
  })
  .openapi('TokenBalance');

export const PortfolioChain = ChainAccountSchema.extend({
  balance_wei: z.string().nullable().openapi({ description: 'Native balance in wei (decimal string); null when the chain could not be read' }),
  balance: z.string().nullable().openapi({ description: 'Native balance in whole units (ether), decimal string' }),
  balances: z
    .array(NativeBalanceSchema)
    .optional()
    .openapi({ description: 'With include=balances: the native balance as a list entry; empty when the chain could not be read' }),
  error: z.string().optional().openapi({ description: 'Why this chain could not be read; the others are unaffected' }),
}).openapi('PortfolioChain');
export const PortfolioEntry = z
  .object({
    id: z.uuid(),
    adi_url: z.string(),
    status: z.string(),
    credit_balance: z.number().int().nullable().openapi({ description: 'Whole credits on the key page, read live; null if the ledger could not be read' }),
    credit_error: z.string().optional(),
    chains: z.array(PortfolioChain),
  })
  .openapi('PortfolioEntry');
