/** A promise that resolves after `ms` milliseconds (outside workflows: they wait on Temporal's durable `sleep`). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
