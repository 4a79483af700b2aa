/**
 * Replays every recorded history in test/replay/histories/ (scripts/record-histories.ts; one per workflow type and
 * app version, a variant where a type has a second path worth keeping, old versions kept) against the current
 * workflow bundle, the one the worker runs (src/temporal/worker.ts workflowBundle). Any non-determinism (or other
 * replay failure) fails the test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../../src/temporal/worker.js';

const DIR = fileURLToPath(new URL('./histories/', import.meta.url));
const WORKFLOW_TYPES = [
  'identityWorkflow',
  'linkChainWorkflow',
  'intentWorkflow',
  'intentChainWorkflow',
  'intentExpiryWorkflow',
  'batcherWorkflow',
  'batchWorkflow',
  'webhookDeliveryWorkflow',
  'webhookDispatcherWorkflow',
  'maintenanceWorkflow',
  'governanceWorkflow',
  'creditsWorkflow',
  'pendingDiscoveryWorkflow',
  'pendingScanWorkflow',
  'providerSignWorkflow',
  'providerKeySwitchWorkflow',
];

interface Recorded {
  workflowType: string;
  workflowId: string;
  appVersion: string;
  /** a second path of one workflow type (e.g. cosigned) */
  variant?: string;
  history: unknown;
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const recorded = files.map((f) => ({ file: f, ...(JSON.parse(readFileSync(`${DIR}${f}`, 'utf8')) as Recorded) }));

describe('workflow replay', () => {
  it('has a recorded history of every workflow type the worker serves', () => {
    expect(new Set(recorded.map((r) => r.workflowType))).toEqual(new Set(WORKFLOW_TYPES));
    for (const r of recorded) expect(r.file).toBe(`${r.workflowType}-${r.appVersion}${r.variant ? `-${r.variant}` : ''}.json`);
  });

  it('replays every recorded history against the current workflow code without non-determinism', async () => {
    const histories = recorded.map((r) => ({ workflowId: r.workflowId, history: historyFromJSON(r.history) }));
    const results = [];
    for await (const res of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) results.push(res);
    expect(results).toHaveLength(recorded.length);
    const failures = results.filter((r) => r.error).map((r) => `${r.workflowId}: ${r.error!.name}: ${r.error!.message}`);
    expect(failures).toEqual([]);
  });

  it('the workflow bundle holds no Ed25519 code: signatures are verified natively, outside the workflow thread', async () => {
    const { code } = await workflowBundle();
    expect(code).not.toMatch(/@noble\/curves\/ed25519/);
  });

  it('detects non-determinism: a history whose scheduled activity differs from the code fails to replay', async () => {
    const m = recorded.find((r) => r.workflowType === 'maintenanceWorkflow')!;
    const tampered = JSON.parse(JSON.stringify(m.history).replace('"name":"purgeExpired"', '"name":"somethingElse"'));
    expect(JSON.stringify(tampered)).toContain('somethingElse');
    const results = [];
    for await (const res of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
      { workflowId: m.workflowId, history: historyFromJSON(tampered) },
    ]))
      results.push(res);
    expect(results).toHaveLength(1);
    expect(results[0]!.error?.name).toBe('DeterminismViolationError');
  });
});
