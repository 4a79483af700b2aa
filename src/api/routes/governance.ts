/**
 * Governance operations (spec §2.5, §3.2, §4.7), scoped to the caller's organization:
 *   POST /v1/governance                 prepare one UpdateKeyPage / UpdateAccountAuth / CreateKeyPage; the workflow
 *                                       governance-<id> starts and waits for the signature. Idempotency-Key honoured.
 *   POST /v1/governance/{id}/signature  the initiator's signature, a Temporal Update on governance-<id>
 *   GET  /v1/governance/{id}            status; collected/required signatures and is_ready read live from the ledger
 */
import { randomUUID } from 'node:crypto';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { eq } from 'drizzle-orm';
import { getOrgGovernanceOp, insertGovernanceOp, type GovernanceOpRow } from '../../db/governance.js';
import { governanceOps, identities } from '../../db/schema.js';
import {
  accountAuthOps,
  authorityQuorumProblem,
  governanceBody,
  GovernanceInputError,
  keyPageOps,
  keyPageQuorumProblem,
  keyPageStepProblem,
  operationsKind,
  OPERATION_TYPES,
  type GovernanceOperation,
} from '../../governance/operations.js';
import { ed25519PublicKeyProblem } from '../../identity/keys.js';
import { requiredSignatures } from '../../governance/submit.js';
import { normUrl, signingProgress, storablePreparedSignature, type StoredPreparedSignature } from '../../ledger/index.js';
import { redactUrls } from '../../net/redact.js';
import { submitGovernanceSignatureUpdate, type GovernanceWorkflowInput, type governanceWorkflow } from '../../workflows/governance.js';
import { OrgIdKey, StageKey } from '../../workflows/search-attributes.js';
import { apiLedger, ledgerApiError, parseSignatureBody, requireValidSignature, SignatureBody } from '../cosign-common.js';
import type { AppDeps, AppEnv } from '../deps.js';
import { ApiError } from '../errors.js';
import { findOrgIdentity, requireActive, requireSigningKey } from '../identity-access.js';
import { requireAuth } from '../middleware/auth.js';
import { errorResponses, RATE_LIMIT_HEADERS } from '../schemas/common.js';
import { secureRoute } from '../secure-route.js';

const OperationSchema = z
  .object({
    type: z.string().openapi({ description: `One of ${OPERATION_TYPES.join(', ')}` }),
    delegate_url: z.string().optional().openapi({ description: 'add_delegate / remove_delegate: the delegate key book URL' }),
    threshold: z.number().optional().openapi({ description: 'set_threshold: the M of M-of-N (accept threshold)' }),
    public_key_hash: z.string().optional().openapi({ description: 'add_key / remove_key: SHA-256 of the raw 32 key bytes, 64 hex' }),
    authority_url: z.string().optional().openapi({ description: 'add_authority / remove_authority: a key book URL' }),
    public_key_hashes: z.array(z.string()).optional().openapi({ description: 'create_key_page: the key hashes of the new page' }),
  })
  .openapi('GovernanceOperation');

const CreateBody = z
  .object({
    identity: z.string().openapi({ description: 'ADI URL of the identity (its id also works)', example: 'acc://alice-corp.acme' }),
    operations: z.array(OperationSchema).max(32).openapi({ description: 'Several operations of one kind (key page, authority, create_key_page); kinds cannot be mixed' }),
    force: z.boolean().optional().openapi({ description: 'Skip the quorum-reachability check (an operation that would leave the page unable to reach its threshold)' }),
    signer_public_key: z.string().optional().openapi({ description: "The key that will sign (any current key of signer_key_page), 64 hex; default the identity's key. hash_to_sign is bound to it" }),
    signer_key_page: z.string().optional().openapi({ description: "The key page that signs (a page of the identity's book); default the identity's key page. The ledger enforces page priority" }),
    key_page_url: z.string().optional().openapi({ description: "Key page operations: the page to change (a page of the identity's book); default the identity's key page" }),
    account_url: z.string().optional().openapi({ description: "Authority operations: the account whose authorities change (within the identity's ADI); default the ADI" }),
  })
  .openapi('CreateGovernanceRequest');

const SigningData = z.object({
  request_id: z.string(),
  transaction_hash: z.string().openapi({ description: 'Ledger transaction hash (hex)' }),
  hash_to_sign: z.string().openapi({ description: 'SHA-256(signature metadata hash ‖ transaction hash): sign these raw 32 bytes' }),
  key_page_version: z.number().int(),
});

const GovernanceSchema = z
  .object({
    governance_op_id: z.uuid(),
    identity_id: z.uuid(),
    identity_url: z.string(),
    kind: z.string(),
    operations: z.array(z.record(z.string(), z.unknown())),
    status: z.string().openapi({ description: 'signing_required → pending_signatures → executed | rejected | expired' }),
    signing_data: SigningData,
    submit_url: z.string(),
    tx_hash: z.string(),
    tx_id: z.string(),
    collected_signatures: z.number().int().optional(),
    required_signatures: z.number().int().optional(),
    is_ready: z.boolean().optional(),
    awaiting_authorities: z.array(z.string()).optional(),
    ledger_error: z.string().optional().openapi({ description: 'Why the live fields are missing (ledger unreachable)' }),
    error_message: z.string().optional(),
    created_at: z.string(),
    updated_at: z.string(),
    idempotent: z.boolean().optional(),
  })
  .openapi('GovernanceOperationStatus');

const SignatureResult = z
  .object({
    governance_op_id: z.uuid(),
    status: z.string(),
    tx_hash: z.string(),
    collected_signatures: z.number().int(),
    required_signatures: z.number().int(),
    is_ready: z.boolean(),
    awaiting_authorities: z.array(z.string()),
  })
  .openapi('GovernanceSignatureResult');

const IdParam = z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Governance operation id' }) });

const within = (url: string, root: string) => url === root || url.startsWith(`${root}/`);

function view(op: GovernanceOpRow, identityUrl: string) {
  const p = op.prepared as unknown as StoredPreparedSignature;
  return {
    governance_op_id: op.id,
    identity_id: op.identityId,
    identity_url: identityUrl,
    kind: op.kind,
    operations: op.operations,
    status: op.status,
    signing_data: { request_id: op.id, transaction_hash: op.txHash, hash_to_sign: p.hashToSign, key_page_version: op.keyPageVersion },
    submit_url: `/v1/governance/${op.id}/signature`,
    tx_hash: op.txHash,
    tx_id: op.txId,
    ...(op.errorMessage ? { error_message: op.errorMessage } : {}),
    created_at: op.createdAt.toISOString(),
    updated_at: op.updatedAt.toISOString(),
  };
}

/** Update failure types of governance-<id> → API errors. */
function updateError(err: unknown): unknown {
  if (err instanceof WorkflowNotFoundError) return new ApiError(409, 'GOVERNANCE_CLOSED', 'The governance operation is closed');
  if (!(err instanceof WorkflowUpdateFailedError)) return err;
  const cause = err.cause;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  const msg = cause?.message ?? err.message;
  switch (type) {
    case 'AlreadySigned':
      return new ApiError(409, 'ALREADY_SIGNED', `This key has already signed the operation (treat as success and read the operation): ${msg}`);
    case 'Closed':
      return new ApiError(409, 'GOVERNANCE_CLOSED', msg);
    case 'InFlight':
      return new ApiError(409, 'SIGNATURE_IN_FLIGHT', msg, undefined, { 'Retry-After': '1' });
    case 'WrongKey':
      return new ApiError(400, 'WRONG_SIGNER', msg, { field: 'public_key' });
    case 'SigningDataStale':
      return new ApiError(409, 'SIGNING_DATA_STALE', `The operation has failed: ${msg}`);
    case 'SignatureRefused':
      return new ApiError(400, 'LEDGER_REFUSED', `signature: the ledger refused it: ${msg}`, { field: 'signature' });
    case 'LedgerUnavailable':
      return new ApiError(502, 'LEDGER_UNAVAILABLE', msg);
    default:
      return err;
  }
}

export function registerGovernanceRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const db = deps.database.db;
  const ledger = apiLedger(deps);
  const json = (schema: z.ZodType, description: string) => ({ description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema } } });

  async function identityUrlOf(id: string): Promise<string> {
    const [r] = await db.select({ adiUrl: identities.adiUrl }).from(identities).where(eq(identities.id, id));
    return r?.adiUrl ?? '';
  }

  // ------------------------------------------------------------------ POST /v1/governance
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/governance',
      tags: ['Governance'],
      summary: 'Prepare a governance operation',
      description:
        'Builds one ledger transaction from the operations (key page: add_key, remove_key, add_delegate, remove_delegate, set_threshold; authority: add_authority, remove_authority; create_key_page) and returns the hash to sign for the initiating key. An operation that would leave the page unable to reach its threshold (threshold above the number of keys, removing the last key or authority) is refused unless force is true. The ledger executes the transaction once the page threshold and every required authority (a new delegate too) have approved; co-signers sign through POST /v1/sign.',
      scopes: ['write'],
      idempotent: true,
      request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
      responses: { 201: json(GovernanceSchema, 'Prepared: sign hash_to_sign and submit to submit_url'), ...errorResponses(400, 404, 502, 503) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const body = c.req.valid('json');
      const identity = await findOrgIdentity(db, auth.orgId, body.identity, { field: 'identity', adiUrl: true });
      requireActive(identity);
      let publicKey: string;
      if (body.signer_public_key !== undefined) {
        const p = ed25519PublicKeyProblem(body.signer_public_key);
        if (p) throw new ApiError(400, 'VALIDATION_ERROR', `signer_public_key: ${p}`, { field: 'signer_public_key' });
        publicKey = body.signer_public_key.toLowerCase();
      } else publicKey = requireSigningKey(identity);

      const ops = body.operations as GovernanceOperation[];
      let kind, txBody;
      try {
        kind = operationsKind(ops);
        txBody = governanceBody(kind, ops);
      } catch (e) {
        if (e instanceof GovernanceInputError) throw new ApiError(400, e.code, e.message, { field: e.field });
        throw e;
      }
      const adi = normUrl(identity.adiUrl);
      const target = (given: string | undefined, root: string, fallback: string, field: string) => {
        if (given === undefined) return fallback;
        let u: string;
        try {
          u = normUrl(given, field);
        } catch {
          throw new ApiError(400, 'VALIDATION_ERROR', `${field}: not an Accumulate URL`, { field });
        }
        if (!within(u, root)) throw new ApiError(400, 'VALIDATION_ERROR', `${field}: must be within ${root}`, { field });
        return u;
      };
      const principal =
        kind === 'key_page'
          ? target(body.key_page_url, normUrl(identity.bookUrl), identity.keyPageUrl, 'key_page_url')
          : kind === 'authority'
            ? target(body.account_url, adi, identity.adiUrl, 'account_url')
            : identity.bookUrl;
      const signerUrl = target(body.signer_key_page, normUrl(identity.bookUrl), identity.keyPageUrl, 'signer_key_page');

      let prepared;
      let signerThreshold: number | null = null;
      try {
        const page = kind === 'key_page' ? await ledger.queryKeyPage(principal) : undefined;
        if (page) {
          // what the ledger would refuse once signed, force or not
          const step = keyPageStepProblem(page, keyPageOps(ops));
          if (step) throw new ApiError(400, 'VALIDATION_ERROR', `${step.field}: ${step.message}`, { field: step.field });
        }
        if (!body.force) {
          const problem = page
            ? keyPageQuorumProblem(page, keyPageOps(ops))
            : kind === 'authority'
              ? authorityQuorumProblem((await ledger.queryAccount(principal)).authorities, accountAuthOps(ops))
              : null;
          if (problem) {
            throw new ApiError(400, 'QUORUM_UNREACHABLE', `operations: ${problem}; send force: true to do it anyway`, { field: 'operations' });
          }
        }
        prepared = await ledger.prepareExternalSignature({ principal, body: txBody, signerUrl, publicKey });
        // the threshold the signatures must meet, kept for when the operation has changed the page
        const signerPage = page && normUrl(page.url) === normUrl(prepared.signerUrl) ? page : await ledger.queryKeyPage(prepared.signerUrl);
        signerThreshold = signerPage.version === prepared.signerVersion ? Math.max(1, signerPage.acceptThreshold) : null;
      } catch (e) {
        throw ledgerApiError(e, 'governance', { publicKey: 'signer_public_key', signerUrl: 'signer_key_page', principal: 'key_page_url' });
      }

      const id = randomUUID();
      const op = await insertGovernanceOp(db, {
        id,
        orgId: auth.orgId,
        identityId: identity.id,
        kind,
        operations: ops as unknown as Record<string, unknown>[],
        principal,
        signerUrl: prepared.signerUrl,
        txHash: prepared.txHash,
        txId: prepared.txId,
        prepared: storablePreparedSignature(prepared) as unknown as Record<string, unknown>,
        keyPageVersion: prepared.signerVersion,
        signerThreshold,
      });
      const input: GovernanceWorkflowInput = { opId: id, orgId: auth.orgId, nominatedPublicKey: publicKey };
      try {
        await deps.temporal.workflow.start<typeof governanceWorkflow>('governanceWorkflow', {
          workflowId: `governance-${id}`,
          taskQueue: deps.config.temporal.taskQueue,
          args: [input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          typedSearchAttributes: [
            { key: OrgIdKey, value: auth.orgId },
            { key: StageKey, value: 'signing_required' },
          ],
        });
      } catch (err) {
        c.get('logger').error('governance workflow could not be started', { err, governance_op_id: id });
        await db.delete(governanceOps).where(eq(governanceOps.id, id));
        throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'The governance operation could not be started; retry shortly', undefined, { 'Retry-After': '5' });
      }
      c.get('logger').info('governance operation prepared', { governance_op_id: id, workflow_id: `governance-${id}`, kind });
      c.header('Location', `/v1/governance/${id}`);
      return c.json(view(op, identity.adiUrl), 201);
    },
  );

  // ------------------------------------------------------------------ POST /v1/governance/{id}/signature
  app.openapi(
    secureRoute(deps, {
      method: 'post',
      path: '/v1/governance/{id}/signature',
      tags: ['Governance'],
      summary: 'Submit the signature of a governance operation',
      description:
        'The signature over hash_to_sign by the key the operation was prepared for (verified before anything is sent: 400). Submitted to the ledger: on a page with threshold > 1 the operation becomes pending_signatures until co-signers sign (POST /v1/sign); executed once the ledger executed it. 409 when this key already signed, or when the signing data is stale (the key page changed, or the key signed something prepared later: the operation is failed, prepare it again); 502 when the ledger could not be reached (nothing changed: retry the same signature).',
      scopes: ['write'],
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: SignatureBody } } } },
      responses: { 200: json(SignatureResult, 'Submitted'), ...errorResponses(400, 404, 409, 502) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const op = await getOrgGovernanceOp(db, auth.orgId, c.req.valid('param').id);
      if (!op) throw new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
      const { signature, publicKey } = parseSignatureBody(c.req.valid('json'));
      const prepared = op.prepared as unknown as StoredPreparedSignature;
      if (publicKey !== prepared.publicKey) throw new ApiError(400, 'WRONG_SIGNER', 'public_key: the signing data was prepared for another key', { field: 'public_key' });
      requireValidSignature(prepared.hashToSign, signature, publicKey);
      let p;
      try {
        p = await deps.temporal.workflow.getHandle(`governance-${op.id}`).executeUpdate(submitGovernanceSignatureUpdate, { args: [{ signature, publicKey }] });
      } catch (err) {
        throw updateError(err);
      }
      return c.json(
        {
          governance_op_id: op.id,
          status: p.status,
          tx_hash: p.txHash,
          collected_signatures: p.collectedSignatures,
          required_signatures: p.requiredSignatures,
          is_ready: p.isReady,
          awaiting_authorities: p.awaitingAuthorities,
        },
        200,
      );
    },
  );

  // ------------------------------------------------------------------ GET /v1/governance/{id}
  app.openapi(
    secureRoute(deps, {
      method: 'get',
      path: '/v1/governance/{id}',
      tags: ['Governance'],
      summary: 'Read a governance operation',
      description:
        'Status and signing data. Once a signature was submitted: collected_signatures and required_signatures of the signing page, is_ready and awaiting_authorities, read live from the ledger (ledger_error instead when it cannot be read).',
      scopes: ['read'],
      request: { params: IdParam },
      responses: { 200: json(GovernanceSchema, 'The operation'), ...errorResponses(404) },
    }),
    async (c) => {
      const auth = requireAuth(c);
      const op = await getOrgGovernanceOp(db, auth.orgId, c.req.valid('param').id);
      if (!op) throw new ApiError(404, 'GOVERNANCE_NOT_FOUND', 'Governance operation not found');
      const base = view(op, await identityUrlOf(op.identityId));
      if (op.signedKeys.length === 0) return c.json(base, 200);
      try {
        const st = await ledger.getTransaction(op.txId);
        const p = await signingProgress(ledger, st, op.signerUrl);
        return c.json(
          { ...base, collected_signatures: p.collected, required_signatures: requiredSignatures(op, st.delivered, p.threshold), is_ready: p.isReady, awaiting_authorities: p.awaitingAuthorities },
          200,
        );
      } catch (e) {
        return c.json({ ...base, ledger_error: redactUrls((e as Error).message, [deps.config.ledgerUrl]) }, 200);
      }
    },
  );
}
