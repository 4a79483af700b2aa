/** The level an SDK log line is written at: as the SDK says, but core's long-workflow-task warning at debug. */
import { describe, expect, it } from 'vitest';
import { sdkLogLevel } from '../../src/temporal/worker.js';

describe('sdkLogLevel', () => {
  it("writes core's long workflow task warning at debug, every other line at its own level", () => {
    const long = '[TMPRL1104] 01a2:33:1 Workflow task duration exceeded 5 seconds.';
    expect(sdkLogLevel('WARN', long)).toBe('debug');
    expect(sdkLogLevel('ERROR', long)).toBe('error');
    expect(sdkLogLevel('WARN', '[TMPRL1100] Nondeterminism error: Activity type of scheduled event')).toBe('warn');
    expect(sdkLogLevel('WARN', 'Activity failed')).toBe('warn');
    expect(sdkLogLevel('INFO', 'Worker state changed')).toBe('info');
    expect(sdkLogLevel('TRACE', 'x')).toBe('debug');
  });
});
