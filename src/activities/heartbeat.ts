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
