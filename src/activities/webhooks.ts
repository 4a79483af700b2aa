/**
 * Webhook activities: fan undispatched events out to endpoints (the outbox), make one signed attempt of a
 * delivery and record it, disable endpoints that keep failing. The workflows decide when; these do the I/O.
 */
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { and, asc, eq, inArray, isNull, isNotNull, or, sql } from 'drizzle-orm';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, type WebhookSettings } from '../config.js';
import type { Db } from '../db/client.js';
import { recordEvent } from '../db/events.js';
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema.js';
import type { Logger } from '../log.js';
import { envelopeOf } from '../webhooks/catalogue.js';
import { EVENT_RETENTION_DAYS, MAX_RETRY_AFTER_MS, signingSecrets, STALE_PENDING_MS } from '../webhooks/policy.js';
import { sendWebhook, type SendResult } from '../webhooks/sender.js';
import { ADVISORY_LOCKS } from '../db/locks.js';

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

/** Rows affected, from either driver's result shape. */
function rowCount(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  const r = result as { rows?: unknown[]; affectedRows?: number };
  return r.rows?.length ?? r.affectedRows ?? 0;
}


export function createWebhookActivities(db: Db, settings: WebhookSettings = DEFAULT_WEBHOOK_SETTINGS, logger?: Logger) {
  const log = logger?.child({ component: 'webhooks' });
  /** the longest quiet gap within one failing streak: the longest retry wait (a Retry-After may stretch one to an hour), twice, plus an attempt */
  const streakGapMs =
    2 * Math.max(MAX_RETRY_AFTER_MS, ...settings.retryScheduleSeconds.map((x) => x * 1000)) + settings.timeoutMs;

  async function dispatchWebhookEvents(limit = 100): Promise<DispatchResult> {
    const more = await db.transaction(async (tx) => {
      // One dispatch at a time (the lock ends with the transaction): listed_seq values are then handed out and
      // committed in the same order, which is what lets GET /v1/events?order=asc page forward without gaps.
      await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.dispatchWebhookEvents})`);
      const batch = await tx
        .select()
        .from(events)
        .where(isNull(events.dispatchedAt))
        .orderBy(asc(events.position))
        .limit(limit + 1)
        .for('update', { skipLocked: true });
      const chunk = batch.slice(0, limit);
      if (chunk.length === 0) return false;
      const orgIds = [...new Set(chunk.map((e) => e.orgId))];
      // Disabled (not deleted) endpoints get their delivery too, recorded failed at once: nothing is sent, but once
      // the endpoint is re-enabled the event can be redelivered from the log like any failed delivery.
      const endpoints = await tx
        .select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId, eventTypes: webhookEndpoints.eventTypes, isActive: webhookEndpoints.isActive })
        .from(webhookEndpoints)
        .where(and(inArray(webhookEndpoints.orgId, orgIds), isNull(webhookEndpoints.deletedAt)));
      const at = new Date();
      const rows = chunk.flatMap((e) =>
        endpoints
          .filter((ep) => ep.orgId === e.orgId && (!ep.eventTypes || ep.eventTypes.includes(e.type)))
          .map((ep) => ({
            orgId: e.orgId,
            eventId: e.id,
            endpointId: ep.id,
            eventType: e.type,
            ...(ep.isActive ? {} : { status: 'failed', lastError: 'endpoint disabled', failedAt: at }),
          })),
      );
      if (rows.length > 0) await tx.insert(webhookDeliveries).values(rows).onConflictDoNothing();
      // listed_seq in position order within the batch too: nextval in an UPDATE's SET is taken in whatever order
      // the rows are visited, so the values are drawn first (ascending) and handed out in the chunk's order
      const drawn = await tx.execute(sql`select nextval('events_listed_seq')::text as s from generate_series(1, ${chunk.length})`);
      const seqs = ((drawn as unknown as { rows?: { s: string }[] }).rows ?? (drawn as unknown as { s: string }[]))
        .map((r) => BigInt(r.s))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const listed = sql.join(
        chunk.map((e, i) => sql`(${e.id}::uuid, ${seqs[i]!.toString()}::bigint)`),
        sql`, `,
      );
      await tx.execute(
        sql`update ${events} set dispatched_at = ${at.toISOString()}::timestamptz, listed_seq = v.seq from (values ${listed}) as v(id, seq) where ${events.id} = v.id`,
      );
      return batch.length > limit;
    });
    // Deliveries to start: never started, or still pending long after their next attempt was due (their workflow
    // was lost: a redeliver whose start failed, a workflow that ended abnormally). Starting one whose workflow
    // still runs is refused by Temporal (already started), and the workflow's own proceed check makes a second
    // run of a finished delivery harmless.
    const staleBefore = new Date(Date.now() - STALE_PENDING_MS).toISOString();
    const unstarted = await db
      .select({ id: webhookDeliveries.id, orgId: webhookDeliveries.orgId })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, 'pending'),
          or(
            isNull(webhookDeliveries.workflowStartedAt),
            and(
              isNotNull(webhookDeliveries.workflowStartedAt),
              sql`greatest(${webhookDeliveries.workflowStartedAt}, coalesce(${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.workflowStartedAt})) < ${staleBefore}::timestamptz`,
            ),
          ),
        ),
      )
      .orderBy(asc(webhookDeliveries.createdAt))
      .limit(limit);
    return { deliveries: unstarted, more: more || unstarted.length === limit, pollIntervalMs: settings.dispatchIntervalMs };
  }

  /** Record that the deliveries' workflows were started now (a re-started stale one too: it is not swept again for a while). */
  async function markDeliveriesStarted(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await db
      .update(webhookDeliveries)
      .set({ workflowStartedAt: new Date() })
      .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, 'pending')));
  }

  /** The delivery workflow's activities gave up (retries exhausted): the delivery is failed, not pending forever. */
  async function failDelivery(input: { deliveryId: string; error: string }): Promise<void> {
    const at = new Date();
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: input.error.slice(0, 1000), failedAt: at, nextAttemptAt: null, updatedAt: at })
      .where(and(eq(webhookDeliveries.id, input.deliveryId), eq(webhookDeliveries.status, 'pending')));
  }

  async function startDelivery(deliveryId: string): Promise<DeliveryPlan> {
    const [d] = await db.select({ status: webhookDeliveries.status }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    if (!d) throw ApplicationFailure.nonRetryable(`webhook delivery ${deliveryId} does not exist`, 'DeliveryNotFound');
    return {
      proceed: d.status === 'pending',
      status: d.status,
      scheduleMs: settings.retryScheduleSeconds.map((s) => Math.round(s * 1000)),
      timeoutMs: settings.timeoutMs,
    };
  }

  /** One signed POST of a delivery, recorded; `retryIndex` = how many retries came before this attempt. */
  async function attemptDelivery(input: { deliveryId: string; retryIndex: number }): Promise<AttemptResult> {
    const [row] = await db
      .select({ delivery: webhookDeliveries, event: events, endpoint: webhookEndpoints })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(eq(webhookDeliveries.id, input.deliveryId));
    if (!row) throw ApplicationFailure.nonRetryable(`webhook delivery ${input.deliveryId} does not exist`, 'DeliveryNotFound');
    const { delivery, event, endpoint } = row;
    // A Temporal retry of this very attempt after its commit (the worker died before reporting): do not send twice.
    // A new attempt (redeliver) is a new activity execution and does send.
    if (delivery.status === 'succeeded' && activityInfo().attempt > 1) {
      return { outcome: 'succeeded', attempt: delivery.attempts, statusCode: delivery.lastStatusCode, error: null, nextDelayMs: null };
    }
    if (endpoint.deletedAt || !endpoint.isActive) {
      const why = endpoint.deletedAt ? 'endpoint deleted' : 'endpoint disabled';
      await db
        .update(webhookDeliveries)
        .set({ status: 'failed', lastError: why, failedAt: new Date(), nextAttemptAt: null, updatedAt: new Date() })
        .where(eq(webhookDeliveries.id, delivery.id));
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
      const [{ attempts }] = await tx
        .update(webhookDeliveries)
        .set({ attempts: sql`${webhookDeliveries.attempts} + 1` })
        .where(eq(webhookDeliveries.id, delivery.id))
        .returning({ attempts: webhookDeliveries.attempts });
      await tx.insert(webhookAttempts).values({
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
        await tx
          .update(webhookDeliveries)
          .set({ status: 'succeeded', deliveredAt: at, lastStatusCode: result.statusCode, lastError: null, nextAttemptAt: null, updatedAt: at })
          .where(eq(webhookDeliveries.id, delivery.id));
        await tx
          .update(webhookEndpoints)
          .set({ consecutiveFailures: 0, failingSince: null, lastSuccessAt: at })
          .where(eq(webhookEndpoints.id, endpoint.id));
        return { outcome: 'succeeded' as const, attempt: attempts, nextDelayMs: null };
      }

      // A failure long after the previous one (more than the longest gap a retry schedule leaves) starts a new
      // streak: an old failing_since left behind by one failure and then silence must not disable a healthy endpoint
      // on its next transient failure.
      const atSql = sql`${at.toISOString()}::timestamptz`;
      const staleBefore = sql`${new Date(at.getTime() - streakGapMs).toISOString()}::timestamptz`;
      const newStreak = sql`(${webhookEndpoints.failingSince} is null or ${webhookEndpoints.lastFailureAt} is null or ${webhookEndpoints.lastFailureAt} < ${staleBefore})`;
      const [ep] = await tx
        .update(webhookEndpoints)
        .set({
          consecutiveFailures: sql`case when ${newStreak} then 1 else ${webhookEndpoints.consecutiveFailures} + 1 end`,
          failingSince: sql`case when ${newStreak} then ${atSql} else ${webhookEndpoints.failingSince} end`,
          lastFailureAt: at,
        })
        .where(eq(webhookEndpoints.id, endpoint.id))
        .returning({ failingSince: webhookEndpoints.failingSince, consecutiveFailures: webhookEndpoints.consecutiveFailures });
      const gone = result.statusCode === 410;
      const failingForMs = ep.failingSince ? at.getTime() - ep.failingSince.getTime() : 0;
      let disabled = false;
      if (gone || failingForMs >= settings.disableAfterSeconds * 1000) {
        const reason = gone
          ? 'the endpoint answered 410 Gone'
          : `every delivery failed for ${Math.round(failingForMs / 1000)} s (${ep.consecutiveFailures} attempts in a row)`;
        const flipped = await tx
          .update(webhookEndpoints)
          .set({ isActive: false, disabledAt: at, disabledReason: reason, updatedAt: at })
          .where(and(eq(webhookEndpoints.id, endpoint.id), eq(webhookEndpoints.isActive, true)))
          .returning({ id: webhookEndpoints.id });
        if (flipped.length > 0) {
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
          log?.warn('webhook endpoint disabled', { endpoint_id: endpoint.id, org_id: endpoint.orgId, reason });
        }
        disabled = true;
      }
      const nextDelayMs =
        disabled || scheduled === undefined
          ? null
          : Math.max(Math.round(scheduled * 1000), Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
      await tx
        .update(webhookDeliveries)
        .set({
          status: nextDelayMs === null ? 'failed' : 'pending',
          lastStatusCode: result.statusCode,
          lastError: disabled ? `${result.error}; endpoint disabled` : result.error,
          nextAttemptAt: nextDelayMs === null ? null : new Date(at.getTime() + nextDelayMs),
          failedAt: nextDelayMs === null ? at : null,
          updatedAt: at,
        })
        .where(eq(webhookDeliveries.id, delivery.id));
      return { outcome: disabled ? ('stopped' as const) : nextDelayMs === null ? ('failed' as const) : ('retry' as const), attempt: attempts, nextDelayMs };
    });
    return { ...outcome, statusCode: result.statusCode, error: result.error };
  }

  /**
   * Retention: events older than `retentionDays` go, with their finished deliveries and attempts (per-resource
   * sequence counters stay, so numbering continues). Deliveries still pending keep their event.
   */
  async function purgeWebhookHistory(input: { retentionDays?: number; now?: string } = {}): Promise<{ events: number; deliveries: number }> {
    const now = input.now ? new Date(input.now) : new Date();
    const cutoff = new Date(now.getTime() - (input.retentionDays ?? EVENT_RETENTION_DAYS) * 24 * 3600_000).toISOString();
    return db.transaction(async (tx) => {
      // One purge at a time (the dispatcher's own and an operator's may overlap): two concurrent purges deleting the
      // same rows in different orders would deadlock. The lock ends with the transaction.
      await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.purgeWebhookHistory})`);
      const old = sql`select d.id from ${webhookDeliveries} d join ${events} e on e.id = d.event_id
        where e.created_at < ${cutoff}::timestamptz and d.status <> 'pending'`;
      await tx.execute(sql`delete from ${webhookAttempts} where delivery_id in (${old})`);
      const deliveries = await tx.execute(sql`delete from ${webhookDeliveries} where id in (${old}) returning id`);
      const gone = await tx.execute(sql`delete from ${events} e where e.created_at < ${cutoff}::timestamptz
        and not exists (select 1 from ${webhookDeliveries} d where d.event_id = e.id) returning e.id`);
      return { events: rowCount(gone), deliveries: rowCount(deliveries) };
    });
  }

  return { dispatchWebhookEvents, markDeliveriesStarted, startDelivery, attemptDelivery, failDelivery, purgeWebhookHistory };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
