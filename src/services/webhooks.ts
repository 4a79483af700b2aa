/**
 * Webhook endpoints and the delivery log, the use cases behind /v1/webhooks:
 *   endpoints   register (URL and secret checked, the organization's cap, a signed ping unless skipped), change,
 *               delete, rotate the secret (earlier secrets keep signing through their grace period), verify
 *   deliveries  the log, one delivery, redeliver (the delivery's workflow restarted; undone when it did not start)
 * Every lookup is scoped to the caller's organization: another organization's id answers 404.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from './errors.js';
import type { Db } from '../db/client.js';
import {
  deleteEndpoint,
  getDeliveryDetail,
  getEndpoint,
  getOrgDelivery,
  getOrgEndpoint,
  insertEndpointUnderCap,
  listOrgDeliveries,
  listOrgEndpoints,
  rotateEndpointSecret,
  updateDelivery,
  updateEndpoint,
  type DeliveryFilter,
  type DeliveryRow,
  type EndpointChanges,
  type EndpointRow,
} from '../db/webhooks.js';
import type { RowPage } from '../db/pagination.js';
import { restartDelivery } from '../temporal/webhooks.js';
import { PING_EVENT_TYPE } from '../webhooks/catalogue.js';
import { MAX_PREVIOUS_SECRETS, PREVIOUS_SECRET_GRACE_MS, signingSecrets } from '../webhooks/policy.js';
import { sendWebhook, type SendResult } from '../webhooks/sender.js';
import { generateSecret, isValidSecret } from '../webhooks/signing.js';
import { checkWebhookUrl, UrlRejected } from '../webhooks/url.js';
import type { Caller, ServiceDeps } from './deps.js';
import { UUID } from '../db/ids.js';

export type WebhookDeps = Pick<ServiceDeps, 'config' | 'database' | 'temporal'>;

async function validUrl(deps: WebhookDeps, raw: string): Promise<string> {
  try {
    return (await checkWebhookUrl(raw, { allowPrivate: deps.config.webhooks.allowPrivateUrls })).toString();
  } catch (e) {
    if (e instanceof UrlRejected) throw new ApiError(400, 'INVALID_WEBHOOK_URL', e.message);
    throw e;
  }
}

/** The given secret once checked, or a new one. */
function validSecret(secret: string | undefined): string {
  if (secret === undefined) return generateSecret();
  if (!isValidSecret(secret)) {
    throw new ApiError(400, 'INVALID_WEBHOOK_SECRET', 'secret must be whsec_ followed by base64 of 24 to 64 random bytes');
  }
  return secret;
}

/** The organization's endpoint (not deleted), or 404. */
export async function findOrgEndpoint(db: Db, orgId: string, id: string): Promise<EndpointRow> {
  const row = UUID.test(id) ? await getOrgEndpoint(db, orgId, id) : undefined;
  if (!row) throw new ApiError(404, 'NOT_FOUND', 'Webhook endpoint not found');
  return row;
}

/** The organization's delivery, or 404. */
export async function findOrgDelivery(db: Db, orgId: string, id: string): Promise<DeliveryRow> {
  const row = UUID.test(id) ? await getOrgDelivery(db, orgId, id) : undefined;
  if (!row) throw new ApiError(404, 'NOT_FOUND', 'Webhook delivery not found');
  return row;
}

/** A signed webhook.ping; records the outcome on the endpoint. */
export async function pingEndpoint(deps: WebhookDeps, endpoint: EndpointRow): Promise<{ result: SendResult; endpoint: EndpointRow }> {
  const settings = deps.config.webhooks;
  const now = new Date();
  const body = JSON.stringify({
    id: `ping_${randomUUID()}`,
    type: PING_EVENT_TYPE,
    timestamp: now.toISOString(),
    resource_id: endpoint.id,
    sequence: 0,
    data: { endpoint_id: endpoint.id, url: endpoint.url },
  });
  // the sender applies the URL rules on the connection itself: the address it judges is the one it connects to
  const result = await sendWebhook({
    url: endpoint.url,
    msgId: JSON.parse(body).id,
    body,
    secrets: signingSecrets(endpoint, now),
    timeoutMs: Math.min(settings.timeoutMs, 10_000),
    allowPrivate: settings.allowPrivateUrls,
  });
  const changes = result.ok ? { verifiedAt: new Date(), verificationError: null } : { verificationError: result.error };
  return { result, endpoint: await updateEndpoint(deps.database.db, endpoint.id, changes) };
}

/** A page of the organization's endpoints, newest first, and how many there are. */
export async function listEndpoints(deps: WebhookDeps, caller: Caller, page: RowPage): Promise<{ rows: EndpointRow[]; total: number }> {
  return listOrgEndpoints(deps.database.db, caller.orgId, page);
}

export interface NewEndpointRequest {
  url: string;
  event_types?: string[] | null;
  description?: string | null;
  secret?: string;
  skip_verification?: boolean;
}

/** Register an endpoint; the secret is in the answer, and nowhere else again. */
export async function createEndpoint(
  deps: WebhookDeps,
  caller: Caller,
  body: NewEndpointRequest,
): Promise<{ endpoint: EndpointRow; verified: boolean; secret: string }> {
  const max = deps.config.webhooks.maxEndpointsPerOrg;
  const url = await validUrl(deps, body.url);
  const secret = validSecret(body.secret);
  const values = { orgId: caller.orgId, url, description: body.description ?? null, eventTypes: body.event_types ?? null, secret };
  const row = await insertEndpointUnderCap(deps.database.db, values, max);
  if (!row) {
    throw new ApiError(
      409,
      'WEBHOOK_ENDPOINT_LIMIT',
      `An organization may have at most ${max} webhook endpoints (WEBHOOK_MAX_ENDPOINTS_PER_ORG); delete one first`,
    );
  }
  let endpoint = row;
  let verified = false;
  if (!body.skip_verification) {
    const pinged = await pingEndpoint(deps, row);
    endpoint = pinged.endpoint;
    verified = pinged.result.ok;
  }
  caller.log.info('webhook endpoint created', { org_id: caller.orgId, endpoint_id: row.id, verified });
  return { endpoint, verified, secret };
}

export interface EndpointChangeRequest {
  url?: string;
  event_types?: string[] | null;
  description?: string | null;
  is_active?: boolean;
}

/**
 * Set the given fields. A new URL is checked and clears the verification; re-enabling resets the failure streak,
 * disabling records why.
 */
export async function changeEndpoint(deps: WebhookDeps, caller: Caller, id: string, body: EndpointChangeRequest): Promise<EndpointRow> {
  const db = deps.database.db;
  const current = await findOrgEndpoint(db, caller.orgId, id);
  const now = new Date();
  const set: EndpointChanges = { updatedAt: now };
  if (body.url !== undefined) {
    const url = await validUrl(deps, body.url);
    if (url !== current.url) Object.assign(set, { url, verifiedAt: null, verificationError: null });
  }
  if (body.event_types !== undefined) set.eventTypes = body.event_types;
  if (body.description !== undefined) set.description = body.description;
  if (body.is_active === true && !current.isActive) {
    Object.assign(set, { isActive: true, disabledAt: null, disabledReason: null, failingSince: null, consecutiveFailures: 0 });
  } else if (body.is_active === false && current.isActive) {
    Object.assign(set, { isActive: false, disabledAt: now, disabledReason: 'disabled by the API' });
  }
  return updateEndpoint(db, current.id, set);
}

export async function removeEndpoint(deps: WebhookDeps, caller: Caller, id: string): Promise<void> {
  const db = deps.database.db;
  const current = await findOrgEndpoint(db, caller.orgId, id);
  await deleteEndpoint(db, current, new Date());
  caller.log.info('webhook endpoint deleted', { org_id: caller.orgId, endpoint_id: current.id });
}

/** When an earlier secret of this endpoint stops signing. */
function expiryOf(e: EndpointRow, secret: string): string {
  const listed = e.previousSecrets?.find((p) => p.secret === secret);
  if (listed) return listed.expires_at;
  return (e.previousSecretExpiresAt ?? new Date(0)).toISOString();
}

/** Replace the secret (generated unless given); 409 when another rotation of the endpoint won. */
export async function rotateSecret(
  deps: WebhookDeps,
  caller: Caller,
  id: string,
  requested: string | undefined,
): Promise<{ id: string; secret: string; rotatedAt: Date; previousSecretExpiresAt: Date }> {
  const db = deps.database.db;
  const current = await findOrgEndpoint(db, caller.orgId, id);
  const secret = validSecret(requested);
  const now = new Date();
  const previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
  // every earlier secret still in its grace period keeps signing too: a retried rotation (its answer lost) or two
  // in a row must not cut off a secret the receiver still uses
  const previousSecrets = [
    { secret: current.secret, expires_at: previousSecretExpiresAt.toISOString() },
    ...signingSecrets({ ...current, secret: '' }, now)
      .filter((x) => x !== '' && x !== current.secret)
      .map((x) => ({ secret: x, expires_at: expiryOf(current, x) })),
  ].slice(0, MAX_PREVIOUS_SECRETS);
  // conditional on the secret read: of two concurrent rotations one wins, the other answers 409 (its secret was never stored)
  const rotated = await rotateEndpointSecret(db, current.id, current.secret, {
    secret,
    previousSecret: current.secret,
    previousSecretExpiresAt,
    previousSecrets,
    secretRotatedAt: now,
    updatedAt: now,
  });
  if (!rotated) {
    throw new ApiError(409, 'CONCURRENT_ROTATION', 'The secret was rotated concurrently; read the endpoint and rotate again if needed');
  }
  caller.log.info('webhook secret rotated', { org_id: caller.orgId, endpoint_id: current.id });
  return { id: current.id, secret, rotatedAt: now, previousSecretExpiresAt };
}

export async function verifyEndpoint(deps: WebhookDeps, caller: Caller, id: string): Promise<SendResult> {
  const current = await findOrgEndpoint(deps.database.db, caller.orgId, id);
  return (await pingEndpoint(deps, current)).result;
}

export interface DeliveryQuery {
  status?: string;
  endpoint_id?: string;
  event_id?: string;
  event_type?: string;
}

/** A page of the delivery log, newest first, and its total; the id filters must be UUIDs (400 naming the field). */
export async function listDeliveries(deps: WebhookDeps, caller: Caller, q: DeliveryQuery, page: RowPage) {
  const filter: DeliveryFilter = { status: q.status, eventType: q.event_type };
  if (q.endpoint_id) {
    if (!UUID.test(q.endpoint_id)) throw new ApiError(400, 'VALIDATION_ERROR', 'endpoint_id: must be a UUID', { field: 'endpoint_id' });
    filter.endpointId = q.endpoint_id;
  }
  if (q.event_id) {
    if (!UUID.test(q.event_id)) throw new ApiError(400, 'VALIDATION_ERROR', 'event_id: must be a UUID', { field: 'event_id' });
    filter.eventId = q.event_id;
  }
  return listOrgDeliveries(deps.database.db, caller.orgId, filter, page);
}

/** One delivery with its event and every attempt. */
export async function readDelivery(deps: WebhookDeps, caller: Caller, id: string) {
  const db = deps.database.db;
  const delivery = await findOrgDelivery(db, caller.orgId, id);
  return { delivery, ...(await getDeliveryDetail(db, delivery)) };
}

/** Send the delivery again now: its workflow restarted; 409 when the endpoint is disabled or deleted. */
export async function redeliver(deps: WebhookDeps, caller: Caller, id: string): Promise<DeliveryRow> {
  const db = deps.database.db;
  const d = await findOrgDelivery(db, caller.orgId, id);
  const endpoint = await getEndpoint(db, d.endpointId);
  if (!endpoint || endpoint.deletedAt || !endpoint.isActive) {
    throw new ApiError(409, 'ENDPOINT_DISABLED', 'The endpoint is disabled or deleted; re-enable it (PATCH is_active) first');
  }
  const now = new Date();
  // pending first (the workflow's proceed check needs it), but workflow_started_at only once the start succeeded:
  // a failed start is rolled back and answered 503, and whatever is left pending the dispatcher sweeps up
  await updateDelivery(db, d.id, { status: 'pending', failedAt: null, nextAttemptAt: now, redeliveries: d.redeliveries + 1, updatedAt: now });
  try {
    await restartDelivery(deps.temporal, deps.config.temporal.taskQueue, d.id, d.orgId);
  } catch (e) {
    const previous = { status: d.status, failedAt: d.failedAt, nextAttemptAt: d.nextAttemptAt, redeliveries: d.redeliveries, updatedAt: new Date() };
    await updateDelivery(db, d.id, previous, now);
    caller.log.warn('webhook redelivery could not start', { org_id: caller.orgId, delivery_id: d.id, error: (e as Error).message });
    throw new ApiError(503, 'REDELIVERY_UNAVAILABLE', 'The delivery could not be started now; nothing changed, retry later');
  }
  await updateDelivery(db, d.id, { workflowStartedAt: new Date() });
  caller.log.info('webhook redelivery', { org_id: caller.orgId, delivery_id: d.id });
  return d;
}
