import { defineConfig } from 'vitest/config';

// pool 'forks': the Temporal SDK's native bridge segfaults under worker threads, so each test file runs in a child process.
export default defineConfig({
  test: {
    pool: 'forks',
    environment: 'node',
    include: ['test/**/*.test.ts'],
    // generous: integration tests start chains, a ledger and workers on a 2-core machine that may be busy
    testTimeout: 120_000,
    hookTimeout: 120_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
