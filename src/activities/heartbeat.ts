/** Activity heartbeats: a crashed worker is noticed within the heartbeat timeout, not the start-to-close one. */
import { Context } from '@temporalio/activity';

/** Heartbeat when running as an activity; a no-op outside one (direct calls in tests). */
export function beat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    /* not in an activity context */
  }
}

/** Heartbeats every `everyMs` while `p` runs (a quorum round or a receipt wait is one long await). */
export async function heartbeating<T>(p: Promise<T>, everyMs = 2000): Promise<T> {
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
