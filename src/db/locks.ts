/**
 * Keys of the Postgres advisory locks the gateway takes, in one place so no two uses collide.
 */
export const ADVISORY_LOCKS = {
  /** session lock: one process migrates at a time */
  migrate: 7233001,
  /** transaction lock: one bootstrap of the operator organization */
  bootstrapAdminKey: 7233006,
  /** transaction lock: one webhook-history purge at a time (concurrent purges would deadlock) */
  purgeWebhookHistory: 7233010,
  /** transaction lock: one webhook dispatch at a time, so events.listed_seq follows commit order */
  dispatchWebhookEvents: 7233011,
  /** transaction lock: self-service sign-ups are counted and inserted one at a time (SIGNUP_MAX_PER_HOUR) */
  selfServiceSignup: 7233012,
} as const;
