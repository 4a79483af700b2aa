/**
 * The innermost failure of an error a workflow caught (an activity's or child workflow's own error under the
 * ActivityFailure / ChildWorkflowFailure wrappers): its application failure type and message.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/workflow';

export function innermostFailure(err: unknown): { type?: string; message: string } {
  let e: unknown = err;
  while (e instanceof TemporalFailure && e.cause) e = e.cause;
  const type = e instanceof ApplicationFailure ? (e.type ?? undefined) : undefined;
  const message = e instanceof Error ? e.message : String(e);
  return { type, message: message || 'failed' };
}
