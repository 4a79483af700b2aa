/**
 * Webhook activities: fan undispatched events out to endpoints (the outbox), make one signed attempt of a
 * delivery and record it, disable endpoints that keep failing. The workflows decide when; these do the I/O.
 */
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, type WebhookSettings } from '../config.js';
import type { Db } from '../db/client.js';
import { recordEvent, type DbOrTx } from '../db/events.js';
import {
  disableEndpoint,
  failPendingDelivery,
  fanOutEvents,
  getDeliveryForAttempt,
  getDeliveryStatus,
  insertAttempt,
  listDeliveriesToStart,
  markDeliveriesStarted,
  nextAttemptNumber,
  purgeWebhookHistory,
  recordEndpointFailure,
  recordEndpointSuccess,
  updateDelivery,
  type DeliveryRow,
  type EndpointRow,
} from '../db/webhooks.js';
import type { Logger } from '../log.js';
import { envelopeOf } from '../webhooks/catalogue.js';
import { EVENT_RETENTION_DAYS, MAX_RETRY_AFTER_MS, signingSecrets, STALE_PENDING_MS } from '../webhooks/policy.js';
import { sendWebhook, type SendResult } from '../webhooks/sender.js';

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  retryScheduleSeconds: DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  disableAfterSeconds: 5 * 24 * 3600,
  timeoutMs: 15_000,
  dispatchIntervalMs: 5_000,
  allowPrivateUrls: false,
  maxEndpointsPerOrg: 20,
  maxConcurrentAttempts: 20,
};

export interface DispatchResult {
  /** deliveries whose workflow is not started yet */
  deliveries: { id: string; orgId: string }[];
  /** more undispatched events remain: look again at once */
  more: boolean;
  pollIntervalMs: number;
}

export interface DeliveryPlan {
  /** false when there is nothing to do (already delivered, endpoint gone) */
  proceed: boolean;
  status: string;
  /** delay before retry n (ms); its length is the number of retries after the first attempt */
  scheduleMs: number[];
  timeoutMs: number;
}

export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'stopped';

export interface AttemptResult {
  outcome: AttemptOutcome;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  /** when `outcome` is retry: wait this long before the next attempt */
  nextDelayMs: number | null;
}

/** Fan-out: undispatched events become deliveries, and the deliveries whose workflow is to be started are listed. */
function createDispatchActivities(db: Db, settings: WebhookSettings) {
  async function dispatchWebhookEvents(limit = 100): Promise<DispatchResult> {
    const more = await fanOutEvents(db, limit);
    // Deliveries to start: never started, or still pending long after their next attempt was due (their workflow
    // was lost: a redeliver whose start failed, a workflow that ended abnormally). Starting one whose workflow
    // still runs is refused by Temporal (already started), and the workflow's own proceed check makes a second
    // run of a finished delivery harmless.
    const unstarted = await listDeliveriesToStart(db, new Date(Date.now() - STALE_PENDING_MS), limit);
    return { deliveries: unstarted, more: more || unstarted.length === limit, pollIntervalMs: settings.dispatchIntervalMs };
  }

  /** Record that the deliveries' workflows were started now (a re-started stale one too: it is not swept again for a while). */
  async function markDeliveriesStartedActivity(ids: string[]): Promise<void> {
    await markDeliveriesStarted(db, ids);
  }

  return { dispatchWebhookEvents, markDeliveriesStarted: markDeliveriesStartedActivity };
}

/** What a failed attempt leaves behind: the endpoint's failing streak (maybe disabling it) and the delivery's next step. */
async function recordFailedAttempt(
  tx: DbOrTx,
  ctx: { settings: WebhookSettings; streakGapMs: number; log?: Logger },
  delivery: DeliveryRow,
  endpoint: EndpointRow,
  result: SendResult,
  scheduled: number | undefined,
  at: Date,
): Promise<{ outcome: 'stopped' | 'failed' | 'retry'; nextDelayMs: number | null }> {
  const { settings } = ctx;
  const ep = await recordEndpointFailure(tx, endpoint.id, at, ctx.streakGapMs);
  const gone = result.statusCode === 410;
  const failingForMs = ep.failingSince ? at.getTime() - ep.failingSince.getTime() : 0;
  let disabled = false;
  if (gone || failingForMs >= settings.disableAfterSeconds * 1000) {
    const reason = gone
      ? 'the endpoint answered 410 Gone'
      : `every delivery failed for ${Math.round(failingForMs / 1000)} s (${ep.consecutiveFailures} attempts in a row)`;
    if (await disableEndpoint(tx, endpoint.id, at, reason)) {
      await recordEvent(tx, {
        orgId: endpoint.orgId,
        type: 'webhook_endpoint.disabled',
        resourceId: endpoint.id,
        data: {
          endpoint_id: endpoint.id,
          url: endpoint.url,
          reason,
          failing_since: ep.failingSince?.toISOString() ?? null,
          consecutive_failures: ep.consecutiveFailures,
        },
      });
      ctx.log?.warn('webhook endpoint disabled', { endpoint_id: endpoint.id, org_id: endpoint.orgId, reason });
    }
    disabled = true;
  }
  const nextDelayMs =
    disabled || scheduled === undefined ? null : Math.max(Math.round(scheduled * 1000), Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  await updateDelivery(tx, delivery.id, {
    status: nextDelayMs === null ? 'failed' : 'pending',
    lastStatusCode: result.statusCode,
    lastError: disabled ? `${result.error}; endpoint disabled` : result.error,
    nextAttemptAt: nextDelayMs === null ? null : new Date(at.getTime() + nextDelayMs),
    failedAt: nextDelayMs === null ? at : null,
    updatedAt: at,
  });
  return { outcome: disabled ? 'stopped' : nextDelayMs === null ? 'failed' : 'retry', nextDelayMs };
}

/** Delivery: the plan of one delivery's workflow, its signed attempts and their record, giving up. */
function createDeliveryActivities(db: Db, settings: WebhookSettings, log?: Logger) {
  /** the longest quiet gap within one failing streak: the longest retry wait (a Retry-After may stretch one to an hour), twice, plus an attempt */
  const streakGapMs = 2 * Math.max(MAX_RETRY_AFTER_MS, ...settings.retryScheduleSeconds.map((x) => x * 1000)) + settings.timeoutMs;

  /** The delivery workflow's activities gave up (retries exhausted): the delivery is failed, not pending forever. */
  async function failDelivery(input: { deliveryId: string; error: string }): Promise<void> {
    await failPendingDelivery(db, input.deliveryId, input.error.slice(0, 1000));
  }

  async function startDelivery(deliveryId: string): Promise<DeliveryPlan> {
    const status = await getDeliveryStatus(db, deliveryId);
    if (status === undefined) throw ApplicationFailure.nonRetryable(`webhook delivery ${deliveryId} does not exist`, 'DeliveryNotFound');
    return {
      proceed: status === 'pending',
      status,
      scheduleMs: settings.retryScheduleSeconds.map((s) => Math.round(s * 1000)),
      timeoutMs: settings.timeoutMs,
    };
  }

  /** One signed POST of a delivery, recorded; `retryIndex` = how many retries came before this attempt. */
  async function attemptDelivery(input: { deliveryId: string; retryIndex: number }): Promise<AttemptResult> {
    const row = await getDeliveryForAttempt(db, input.deliveryId);
    if (!row) throw ApplicationFailure.nonRetryable(`webhook delivery ${input.deliveryId} does not exist`, 'DeliveryNotFound');
    const { delivery, event, endpoint } = row;
    // A Temporal retry of this very attempt after its commit (the worker died before reporting): do not send twice.
    // A new attempt (redeliver) is a new activity execution and does send.
    if (delivery.status === 'succeeded' && activityInfo().attempt > 1) {
      return { outcome: 'succeeded', attempt: delivery.attempts, statusCode: delivery.lastStatusCode, error: null, nextDelayMs: null };
    }
    if (endpoint.deletedAt || !endpoint.isActive) {
      const why = endpoint.deletedAt ? 'endpoint deleted' : 'endpoint disabled';
      await updateDelivery(db, delivery.id, { status: 'failed', lastError: why, failedAt: new Date(), nextAttemptAt: null, updatedAt: new Date() });
      return { outcome: 'stopped', attempt: delivery.attempts, statusCode: null, error: why, nextDelayMs: null };
    }

    const now = new Date();
    const body = JSON.stringify(envelopeOf(event));
    const secrets = signingSecrets(endpoint, now);
    // the URL rules are applied by the sender on the connection itself (connect-time address check)
    const result: SendResult = await sendWebhook({
      url: endpoint.url,
      msgId: event.id,
      body,
      secrets,
      timeoutMs: settings.timeoutMs,
      allowPrivate: settings.allowPrivateUrls,
    });

    const scheduled = settings.retryScheduleSeconds[input.retryIndex];
    const outcome = await db.transaction(async (tx) => {
      const at = new Date();
      const attempts = await nextAttemptNumber(tx, delivery.id);
      await insertAttempt(tx, {
        deliveryId: delivery.id,
        attempt: attempts,
        webhookTimestamp: result.timestamp,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
        succeeded: result.ok,
      });
      if (result.ok) {
        await updateDelivery(tx, delivery.id, {
          status: 'succeeded',
          deliveredAt: at,
          lastStatusCode: result.statusCode,
          lastError: null,
          nextAttemptAt: null,
          updatedAt: at,
        });
        await recordEndpointSuccess(tx, endpoint.id, at);
        return { outcome: 'succeeded' as const, attempt: attempts, nextDelayMs: null };
      }
      const failed = await recordFailedAttempt(tx, { settings, streakGapMs, log }, delivery, endpoint, result, scheduled, at);
      return { ...failed, attempt: attempts };
    });
    return { ...outcome, statusCode: result.statusCode, error: result.error };
  }

  return { startDelivery, attemptDelivery, failDelivery };
}

/**
 * Retention: events older than `retentionDays` go, with their finished deliveries and attempts (per-resource
 * sequence counters stay, so numbering continues). Deliveries still pending keep their event.
 */
function createRetentionActivities(db: Db) {
  async function purgeWebhookHistoryActivity(input: { retentionDays?: number; now?: string } = {}): Promise<{ events: number; deliveries: number }> {
    const now = input.now ? new Date(input.now) : new Date();
    return purgeWebhookHistory(db, new Date(now.getTime() - (input.retentionDays ?? EVENT_RETENTION_DAYS) * 24 * 3600_000));
  }
  return { purgeWebhookHistory: purgeWebhookHistoryActivity };
}

export function createWebhookActivities(db: Db, settings: WebhookSettings = DEFAULT_WEBHOOK_SETTINGS, logger?: Logger) {
  const log = logger?.child({ component: 'webhooks' });
  return { ...createDispatchActivities(db, settings), ...createDeliveryActivities(db, settings, log), ...createRetentionActivities(db) };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
