/**
 * The innermost failure of an error a workflow caught (an activity's or child workflow's own error under the
 * ActivityFailure / ChildWorkflowFailure wrappers): its application failure type and message.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/workflow';

export function innermostFailure(err: unknown): { type?: string; message: string; details?: unknown[] } {
  let e: unknown = err;
  while (e instanceof TemporalFailure && e.cause) e = e.cause;
  const type = e instanceof ApplicationFailure ? (e.type ?? undefined) : undefined;
  const message = e instanceof Error ? e.message : String(e);
  const details = e instanceof ApplicationFailure && e.details?.length ? [...e.details] : undefined;
  return { type, message: message || 'failed', ...(details ? { details } : {}) };
}
