/**
 * What each scope an API key can hold is for. The operations that need each scope are not listed here: GET /v1/scopes
 * reads them from the routes' own declarations (the rules the scope check enforces), so they cannot drift.
 */
import { SCOPES, type Scope } from '../db/api-keys.js';

const DESCRIPTIONS: Record<Scope, string> = {
  read: 'Read identities, transactions, governance operations, pending actions and the portfolio; also webhook endpoints, deliveries and the event log',
  write: 'Create and change identities, prepare and sign transactions, governance operations and co-signatures; also manage webhook endpoints',
  'proof:read': 'Read proof artifacts, bundles, custody chains and ledger receipts',
  admin:
    "Manage the organization's API keys (a key can only create or rotate keys within its own scopes, rate limit and expiry); an admin key also passes every any-of rule",
  'webhook:write': 'Register, change, verify and delete webhook endpoints, rotate their secrets, redeliver',
  'webhook:read': 'List webhook endpoints and the delivery log',
  'events:read': 'Read the event log',
  'provider:manage':
    "Provider-signing identities (the gateway holds the key): set an identity's signing policy (PATCH /v1/identity/{id} provider_policy), have the gateway sign governance operations and co-signatures with the key it holds, and switch an identity to external signing",
  operator: "Read the gateway-wide /metrics. Held only by the operator's bootstrap key; self-service organizations never get it",
};

export interface ScopeEntry {
  name: Scope;
  description: string;
}

export const SCOPE_CATALOGUE: readonly ScopeEntry[] = SCOPES.map((name) => ({ name, description: DESCRIPTIONS[name] }));
