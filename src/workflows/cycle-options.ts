/**
 * How the chain cycle's steps run, shared by the chain cycle (intent-chain.ts) and the batch (batch.ts): retried with
 * backoff for as long as the intent can still be valid, and never for a failure no retry can fix.
 */
import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';
import { NON_RETRYABLE_INTENT_ERRORS } from '../protocol/failures.js';

export const CYCLE_RETRY: RetryPolicy = {
  initialInterval: '250 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '15 seconds',
  nonRetryableErrorTypes: [...NON_RETRYABLE_INTENT_ERRORS],
};

/** Quorum rounds and chain transactions (heartbeating). */
export const CYCLE_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '20 seconds',
  scheduleToCloseTimeout: '2 hours',
  retry: CYCLE_RETRY,
};
