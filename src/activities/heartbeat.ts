/** Activity heartbeats: a crashed worker is noticed within the heartbeat timeout, not the start-to-close one. */
import { Context } from '@temporalio/activity';

/**
 * The running activity's context, to heartbeat through; undefined outside an activity (direct calls in tests) and
 * in a local activity, which has no heartbeat (the workflow task that runs it is extended instead).
 */
function heartbeatContext(): Context | undefined {
  try {
    const c = Context.current();
    return c.info.isLocal ? undefined : c;
  } catch {
    return undefined;
  }
}

/** Heartbeat when running as an activity; a no-op otherwise (see heartbeatContext). */
export function beat(details?: unknown): void {
  heartbeatContext()?.heartbeat(details);
}

/** Heartbeats every `everyMs` while `p` runs (a quorum round or a receipt wait is one long await). */
export async function heartbeating<T>(p: Promise<T>, everyMs = 2000): Promise<T> {
  if (!heartbeatContext()) return p;
  const t = setInterval(() => beat(), everyMs);
  try {
    return await p;
  } finally {
    clearInterval(t);
  }
}

/**
 * When this attempt's start-to-close timeout runs out (ms since the epoch), undefined outside an activity. An attempt
 * that outlives it keeps running (nothing stops it without heartbeats) while Temporal has moved on: such an attempt
 * must not record what it did.
 */
export function attemptDeadline(): number | undefined {
  try {
    const ms = Context.current().info.startToCloseTimeoutMs;
    return ms ? Date.now() + ms : undefined;
  } catch {
    return undefined;
  }
}
