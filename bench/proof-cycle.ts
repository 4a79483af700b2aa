/**
 * Proof cycle latency and gas: on a local devnet made here (bench/lib/devnet.ts:
 * Temporal dev server, ledger simulator with 20 ms blocks, two anvils with the system contracts deployed with the
 * 7 validators' set, the 7 validators, in-memory PGlite (or a fresh database on DATABASE_URL's server),
 * in-process worker and API).
 *
 * Gateway: single-leg TestTarget.record(bytes32) calls with expectedEvents + expectedState on ethereum-sepolia,
 * timed from POST /v1/transaction/{id}/signature until GET /v1/transaction/{id} shows `completed`:
 *   - sequential: COUNT cycles one after another (one identity; GET every 25 ms);
 *   - concurrent: COUNT cycles submitted at once (COUNT identities and COUNT TestTargets, one intent each, as COUNT
 *     independent clients would; GET every 100 ms each).
 * Server-side figures (intents.submitted_at → completed_at) and the per-stage split (intent_chains.step_times)
 * are printed too. Gas per proof-gated call is read from the receipts of the legs' three transactions.
 *
 * CPU: the CPU time of the devnet (this process, every process it started, and the PostgreSQL backends of its
 * database) during each run (/proc), per cycle and by process, and the floor it sets for the concurrent median on
 * this many cores; what the rest of the machine spent meanwhile is printed beside it, so a run disturbed by other
 * work shows.
 *
 * Baseline in the same run, the bare protocol cycle: the same cycle driven straight from the libraries, with no
 * Temporal, database or API — the client's ledger write (signed with its key), the attestation quorum, createAnchor,
 * executeComprehensiveProof, executeGovernanceProofDirect (viem, its own funded key), the observation quorum and the
 * proof_result write — COUNT cycles one after another and COUNT at once (the concurrent clients and targets), timed
 * from the ledger submission to the result record, with its CPU. Its concurrency ratio is what the validators,
 * ledger and chains alone cost on this machine: no orchestration can do better. The three transactions are timed
 * on their own too (gateway p50 / bare p50), and their gas is printed beside the gateway's.
 *
 * Targets (what the gateway adds to the protocol, measured against the bare cycle in the same run): sequential
 * p50 ≤ 1.0 s and p95 ≤ 1.5 s; the COUNT concurrent cycles' p50 ≤ 1.5 × the bare cycle's concurrent p50, and the
 * gateway's CPU per concurrent cycle ≤ 2 × the bare cycle's.
 *
 *   npx tsx bench/proof-cycle.ts batched [count=20] [wide=40] [processes] [worker-process]   (the batched class: bench/proof-cycle-batched.ts)
 *   npx tsx bench/proof-cycle.ts [count=20] [processes] [worker-process]
 *     (processes: the 7 validators each in its own process; worker-process: the worker in its own process, which
 *      needs DATABASE_URL; by default both run in the bench's process)
 *   PROFILE_DIR=/tmp/prof npx tsx bench/proof-cycle.ts                 (+ a CPU profile of the concurrent run, and
 *                                                                       with worker-process one of the worker's whole run)
 *   (the Temporal CLI is found as for `npm start`: TEMPORAL_CLI_PATH, PATH or .venv-temporal)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { executeGovernanceProofDirect, proofForLeg } from '../src/chain/account.js';
import { createAnchor, executeComprehensiveProof, readValidatorSet } from '../src/chain/anchor.js';
import { anchorMessage } from '../src/chain/formulas.js';
import { createLedgerClient, tx } from '../src/ledger/index.js';
import { buildIntent, INTENT_MEMO, planIntentAnchor } from '../src/protocol/intent/index.js';
import { attestRequestFor, observeRequestFor } from '../src/protocol/validator-wire.js';
import { createQuorumClient, type QuorumClient } from '../src/validator/quorum.js';
import type { ChainWriter } from '../src/chain/clients.js';
import {
  ANVIL_KEY_2,
  arg,
  benchWallets,
  CHAINS,
  cpuDuring,
  createBenchIdentity,
  deployTestTargets,
  fundAccount,
  pct,
  prepareIntent,
  recordLeg,
  stageSplit,
  startBenchDevnet,
  submitIntent,
  waitCompleted,
  type BenchDevnet,
  type BenchIdentity,
  type Json,
} from './lib/devnet.js';
import { benchArgs, usageError } from './lib/args.js';
import { runBatchedBench } from './proof-cycle-batched.js';

// checked before anything is set up: a bad argument is a message and exit status 2, not a stack trace after the devnet
const USAGE =
  'npx tsx bench/proof-cycle.ts [count=20] [processes] [worker-process]   (npm run bench:proof-cycle -- 1: one cycle each way)\n' +
  '       npx tsx bench/proof-cycle.ts batched [count=20] [wide=40] [processes] [worker-process]   (the batched class against the standard: bench/proof-cycle-batched.ts)';
const ARGS = benchArgs(USAGE, {
  positional: [
    { name: 'count', default: 20, min: 1, max: 1000 },
    { name: 'wide', default: 40, min: 1, max: 1000 },
  ],
  flags: ['processes', 'worker-process', 'batched'],
});
const COUNT = ARGS.values.count!;
const FLAGS = ARGS.flags;
if (FLAGS.has('worker-process') && !process.env.DATABASE_URL)
  usageError(USAGE, 'worker-process needs a database the worker can share: set DATABASE_URL=postgres://…');
/** `processes`: each validator in its own process (as deployed) instead of all 7 in the bench's process */
const VALIDATORS = FLAGS.has('processes') ? 'processes' : 'in-process';
/** `worker-process`: the worker as its own process (as deployed) instead of in the bench's process; needs DATABASE_URL */
const WORKER = FLAGS.has('worker-process') ? 'process' : 'in-process';
const CHAIN = CHAINS[0];
/** PROFILE_DIR=dir: a V8 CPU profile of this process during the concurrent run is written there (open it in Chrome DevTools) */
const PROFILE_DIR = process.env.PROFILE_DIR;
const TARGET = { p50: 1000, p95: 1500, overBareConcurrent: 1.5, cpuOverBare: 2 };

interface Cycle {
  clientMs: number;
  /** POST .../signature until its answer (the intent submitted to the ledger) */
  postMs: number;
  /** POST .../signature sent until the intent's submitted_at (its ledger submission recorded) */
  toSubmittedMs: number;
  /** the intent's completed_at until the client has the answer that says completed */
  toSeenMs: number;
  serverMs: number;
  intent: Json;
}

const median = (xs: number[]) => pct(xs, 0.5);

async function main() {
  const dn = await startBenchDevnet({ name: 'bench-cycle', validators: VALIDATORS === 'processes' ? 'processes' : true, worker: WORKER });
  try {
    const wallets = benchWallets(dn);
    const [target] = await deployTestTargets(wallets);
    const one = await createBenchIdentity(dn);
    await fundAccount(wallets, one.account);

    let n = 0;
    const cycle = async (who: BenchIdentity, ready?: Promise<void>, to: Hex = target!): Promise<Cycle> => {
      const p = await prepareIntent(dn, who, [recordLeg(CHAIN, who.account, to, arg(`bench-${++n}-${Date.now()}`))]);
      await ready;
      const t0 = performance.now();
      const sentAt = Date.now(); // the row's times are this machine's clock too
      await submitIntent(dn, who, p);
      const postMs = performance.now() - t0;
      const done = await waitCompleted(dn, p.intent_id, 300_000);
      const clientMs = performance.now() - t0;
      const [submittedAt, completedAt] = [Date.parse(done.submitted_at), Date.parse(done.completed_at)];
      return { clientMs, postMs, toSubmittedMs: submittedAt - sentAt, toSeenMs: Date.now() - completedAt, serverMs: completedAt - submittedAt, intent: done };
    };

    await cycle(one); // warm-up: workflow cache, connections, viem clients, validator hash memo
    const seqCpu = await cpuDuring(
      async () => {
        const out: Cycle[] = [];
        for (let i = 0; i < COUNT; i++) out.push(await cycle(one));
        return out;
      },
      { database: dn.databaseName },
    );
    const sequential = seqCpu.result;

    // COUNT independent clients (a key's ledger timestamps must increase, so one identity each)
    const clients = await Promise.all(Array.from({ length: COUNT }, () => createBenchIdentity(dn, 1000, 200)));
    // and a TestTarget each: expectedState is checked at the end of the execution's block, where several
    // concurrent record() calls on one contract would overwrite each other's lastArg
    const targets: Hex[] = [];
    for (let i = 0; i < COUNT; i++) targets.push((await deployTestTargets(wallets.slice(0, 1)))[0]!);
    let go!: () => void;
    const ready = new Promise<void>((r) => (go = r));
    const pending = clients.map((c, i) => cycle(c, ready, targets[i]));
    await new Promise((r) => setTimeout(r, 2000)); // let every prepare finish
    const tc = performance.now();
    const concCpu = await cpuDuring(
      () =>
        profiled(PROFILE_DIR, 'proof-cycle-concurrent', async () => {
          go();
          return Promise.all(pending);
        }),
      { database: dn.databaseName },
    );
    const concurrent = concCpu.result;
    const concurrentWall = performance.now() - tc;
    const cores = availableParallelism();
    const perCycle = (c: { devnetMs: number; otherMs: number; byProcess: Record<string, number> }) => ({
      devnet_cpu_ms: Math.round(c.devnetMs / COUNT),
      other_processes_cpu_ms: Math.round(c.otherMs / COUNT),
      by_process: Object.fromEntries(
        Object.entries(c.byProcess)
          .filter(([, ms]) => ms / COUNT >= 1)
          .sort((a, b) => b[1] - a[1])
          .map(([name, ms]) => [name, Math.round(ms / COUNT)]),
      ),
    });
    const cpu = { cores, sequential: perCycle(seqCpu), concurrent: perCycle(concCpu) };
    // n cycles of x CPU-ms on C cores cannot all be done before n·x/C, nor the median before about half of that
    const floorMedianMs = Math.round((COUNT * cpu.concurrent.devnet_cpu_ms) / cores / 2);

    const gas = await gasOf(dn, sequential);
    const stages = await stageSplit(
      dn,
      sequential.map((c) => c.intent),
    );
    const stagesConcurrent = await stageSplit(
      dn,
      concurrent.map((c) => c.intent),
    );
    const bare = await bareRuns(dn, one, target!, clients, targets);
    const bareRatio = median(bare.concurrent.ms) / median(bare.sequential.ms);
    const slowest = (cs: Cycle[]) => cs.reduce((a, b) => (b.clientMs > a.clientMs ? b : a));
    const timelines = {
      sequential: await timeline(dn, slowest(sequential)),
      concurrent: await timeline(dn, slowest(concurrent)),
    };

    const row = (run: string, xs: number[]) => ({
      run,
      n: xs.length,
      p50_ms: Math.round(pct(xs, 0.5)),
      p95_ms: Math.round(pct(xs, 0.95)),
      max_ms: Math.round(Math.max(...xs)),
    });
    const rows = [
      row(
        'gateway sequential (client: POST signature → GET completed)',
        sequential.map((c) => c.clientMs),
      ),
      row(
        'gateway sequential (server: submitted_at → completed_at)',
        sequential.map((c) => c.serverMs),
      ),
      row(
        `gateway ${COUNT} concurrent (client)`,
        concurrent.map((c) => c.clientMs),
      ),
      row(
        `gateway ${COUNT} concurrent (server)`,
        concurrent.map((c) => c.serverMs),
      ),
      row('bare viem: createAnchor + executeComprehensiveProof + executeGovernanceProofDirect', bare.sequential.txMs),
      row('bare protocol cycle sequential (no Temporal, database or API: ledger submission → proof_result)', bare.sequential.ms),
      row(`bare protocol cycle ${COUNT} concurrent`, bare.concurrent.ms),
      row(
        'gateway sequential: POST signature until answered (submitted to the ledger)',
        sequential.map((c) => c.postMs),
      ),
      // where the concurrent client's time goes besides the server's: before the submission is recorded, after completion
      row(
        `gateway ${COUNT} concurrent: POST signature until answered`,
        concurrent.map((c) => c.postMs),
      ),
      row(
        `gateway ${COUNT} concurrent: POST signature sent → submitted_at`,
        concurrent.map((c) => c.toSubmittedMs),
      ),
      row(
        `gateway ${COUNT} concurrent: completed_at → the client reads completed`,
        concurrent.map((c) => c.toSeenMs),
      ),
    ];
    const seqP50 = rows[0]!.p50_ms;
    const concurrencyRatio = rows[2]!.p50_ms / seqP50;
    const overBareTxs = seqP50 / rows[4]!.p50_ms;
    const overBareConcurrent = rows[2]!.p50_ms / rows[6]!.p50_ms;
    const cpuOverBare = cpu.concurrent.devnet_cpu_ms / bare.cpu.devnet_cpu_ms;
    const checks = {
      p50: seqP50 <= TARGET.p50,
      p95: rows[0]!.p95_ms <= TARGET.p95,
      overBareConcurrent: overBareConcurrent <= TARGET.overBareConcurrent,
      cpuOverBare: cpuOverBare <= TARGET.cpuOverBare,
    };
    const verdict = (ok: boolean) => (ok ? 'holds' : 'MISSED');

    console.log(
      `\nProof cycle, ${COUNT} single-leg record(bytes32) calls on ${CHAIN.name}, 7 validators (quorum 5, ${VALIDATORS}), worker ${WORKER}, ledger block 20 ms\n`,
    );
    console.table(rows);
    console.log('Gas per proof-gated call (median of the sequential cycles; bare run in brackets):');
    console.table(
      Object.entries(gas.gateway).map(([call, g]) => ({ call, gateway_gas: g, bare_gas: bare.sequential.gas[call as keyof typeof bare.sequential.gas] })),
    );
    console.log('Where the time goes (sequential; median ms per stage, from intents.submitted_at and intent_chains.step_times):');
    console.table(stages);
    console.log(`Where the time goes (${COUNT} concurrent):`);
    console.table(stagesConcurrent);
    for (const [run, t] of Object.entries(timelines)) {
      console.log(
        `Slowest ${run} cycle (${t.workflowId}), from its workflow histories: workflow tasks ${t.workflowTaskMs} ms in ${t.workflowTasks} tasks (local activities included); done_ms after the signature`,
      );
      console.table(t.activities);
    }
    console.log(
      `CPU per cycle of the devnet (${cores} cores): sequential ${cpu.sequential.devnet_cpu_ms} ms, concurrent ${cpu.concurrent.devnet_cpu_ms} ms; the rest of the machine meanwhile: ${cpu.sequential.other_processes_cpu_ms} and ${cpu.concurrent.other_processes_cpu_ms} ms per cycle; by process (ms per cycle, concurrent run):`,
    );
    console.table(
      Object.entries(cpu.concurrent.by_process).map(([process, ms]) => ({
        process,
        cpu_ms_per_cycle: ms,
        sequential_cpu_ms_per_cycle: cpu.sequential.by_process[process] ?? 0,
      })),
    );
    console.log(
      `CPU floor of the concurrent median: ${COUNT} × ${cpu.concurrent.devnet_cpu_ms} ms / ${cores} cores / 2 = ${floorMedianMs} ms (${(floorMedianMs / seqP50).toFixed(2)} × the sequential p50)`,
    );
    console.log(`concurrent wall time: ${Math.round(concurrentWall)} ms (${(COUNT / (concurrentWall / 1000)).toFixed(2)} cycles/s)`);
    console.log(`bare protocol cycle CPU per cycle (${COUNT} concurrent): ${bare.cpu.devnet_cpu_ms} ms; by process: ${JSON.stringify(bare.cpu.by_process)}`);
    console.log(
      `concurrency ratio (p50 concurrent / p50 sequential): gateway ${concurrencyRatio.toFixed(2)}, bare protocol cycle ${bareRatio.toFixed(2)} (the validators, ledger and chains alone on this machine)`,
    );
    console.log(`sequential gateway p50 / bare p50: ${overBareTxs.toFixed(2)} (three transactions), ${(seqP50 / rows[5]!.p50_ms).toFixed(2)} (protocol cycle)`);
    console.log(
      `${COUNT} concurrent, gateway p50 / bare cycle p50: ${overBareConcurrent.toFixed(2)}, target ≤ ${TARGET.overBareConcurrent}: ${verdict(checks.overBareConcurrent)}; ` +
        `CPU per cycle, gateway / bare cycle: ${cpuOverBare.toFixed(2)}, target ≤ ${TARGET.cpuOverBare}: ${verdict(checks.cpuOverBare)}`,
    );
    console.log(
      `sequential p50 ${seqP50} ms, target ≤ ${TARGET.p50}: ${verdict(checks.p50)}; p95 ${rows[0]!.p95_ms} ms, target ≤ ${TARGET.p95}: ${verdict(checks.p95)}`,
    );
    console.log(
      JSON.stringify({
        bench: 'proof-cycle',
        count: COUNT,
        validators: VALIDATORS,
        worker: WORKER,
        results: rows,
        gas: gas.gateway,
        bare_gas: bare.sequential.gas,
        stages_ms: stages,
        stages_concurrent_ms: stagesConcurrent,
        slowest: timelines,
        concurrent_wall_ms: Math.round(concurrentWall),
        cpu_per_cycle: cpu,
        cpu_floor_concurrent_median_ms: floorMedianMs,
        concurrency_ratio: Number(concurrencyRatio.toFixed(2)),
        gateway_over_bare_p50: Number(overBareTxs.toFixed(2)),
        bare_cycle: { cpu_per_cycle: bare.cpu, concurrency_ratio: Number(bareRatio.toFixed(2)) },
        over_bare_concurrent_p50: Number(overBareConcurrent.toFixed(2)),
        cpu_over_bare: Number(cpuOverBare.toFixed(2)),
        targets: { p50_ms: TARGET.p50, p95_ms: TARGET.p95, over_bare_concurrent_p50: TARGET.overBareConcurrent, cpu_over_bare: TARGET.cpuOverBare },
        holds: checks,
        pass: Object.values(checks).every(Boolean),
      }),
    );
  } finally {
    await dn.stop();
  }
}

/** Runs `fn` under the V8 sampling profiler of this process when `dir` is set and writes `<dir>/<name>.cpuprofile`. */
async function profiled<T>(dir: string | undefined, name: string, fn: () => Promise<T>): Promise<T> {
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
    console.log(`CPU profile of the concurrent run: ${join(dir, `${name}.cpuprofile`)}`);
  }
}

/** gasUsed of each leg's three transactions (median over the cycles) and their total. */
async function gasOf(dn: BenchDevnet, cycles: Cycle[]) {
  const pub = benchWallets(dn)[0]!.public;
  const per = { createAnchor: [] as number[], executeComprehensiveProof: [] as number[], executeGovernanceProofDirect: [] as number[], total: [] as number[] };
  for (const c of cycles) {
    const t = c.intent.legs[0].transactions;
    const [a, p, e] = await Promise.all(
      [t.create_anchor, t.execute_comprehensive_proof, t.execute_governance_proof_direct].map(async (h: Hex) => {
        const r = await pub.getTransactionReceipt({ hash: h });
        if (r.status !== 'success') throw new Error(`${h} reverted`);
        return Number(r.gasUsed);
      }),
    );
    per.createAnchor.push(a!);
    per.executeComprehensiveProof.push(p!);
    per.executeGovernanceProofDirect.push(e!);
    per.total.push(a! + p! + e!);
  }
  return { gateway: Object.fromEntries(Object.entries(per).map(([k, v]) => [k, median(v)])) as Record<keyof typeof per, number> };
}

/**
 * From the workflow histories of a cycle (intent-<id>, and intent-<id>-<chain> where it has a child): per activity
 * the time it waited in the task queue (scheduled → started, last attempt), ran (started → completed) and its
 * attempts; and the time spent in workflow tasks (scheduled → completed). queued_ms of a retried activity includes its failed attempts and
 * backoff (the history records only the last attempt's start), and last_failure says why the previous attempt failed.
 * done_ms: when each step finished, ms after the signature's Update arrived (its workflow task was scheduled). A
 * local activity (its marker) runs inside a workflow task, so it has no queue and its own run time is not recorded:
 * it shows done_ms only, and the workflow tasks' time includes it.
 */
async function timeline(dn: BenchDevnet, c: Cycle) {
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  const activities: {
    workflow: string;
    activity: string;
    local: boolean;
    attempts: number;
    queued_ms?: number;
    ran_ms?: number;
    done_ms: number;
    last_failure?: string;
  }[] = [];
  let signedAt: number | undefined;
  const since = (at: number) => Math.round(at - (signedAt ?? at));
  let workflowTaskMs = 0;
  let workflowTasks = 0;
  const workflowId = `intent-${c.intent.intent_id}`;
  for (const id of [workflowId, `${workflowId}-${CHAIN.name}`]) {
    const workflow = id === workflowId ? 'intent' : 'chain';
    // a single-chain intent runs its chain cycle in its own workflow: there is no child to read
    const history = await dn.client.workflow
      .getHandle(id)
      .fetchHistory()
      .catch((e: unknown) => {
        if (id === workflowId) throw e;
        return undefined;
      });
    if (!history) continue;
    const scheduled = new Map<number, { name: string; at: number; startedAt?: number; attempt?: number; lastFailure?: string }>();
    let wftScheduled = 0;
    for (const e of history.events ?? []) {
      const at = ms(e.eventTime);
      if (e.workflowTaskScheduledEventAttributes) wftScheduled = at;
      // the Update arrived with the workflow task that accepted it (scheduled for it)
      if (e.workflowExecutionUpdateAcceptedEventAttributes) signedAt ??= wftScheduled;
      if (e.workflowTaskCompletedEventAttributes) {
        workflowTaskMs += at - wftScheduled;
        workflowTasks++;
      }
      const sch = e.activityTaskScheduledEventAttributes;
      if (sch) scheduled.set(Number(e.eventId), { name: sch.activityType?.name ?? '?', at });
      const st = e.activityTaskStartedEventAttributes;
      if (st)
        Object.assign(scheduled.get(Number(st.scheduledEventId))!, {
          startedAt: at,
          attempt: st.attempt ?? 1,
          lastFailure: st.lastFailure?.message?.slice(0, 160) ?? undefined,
        });
      const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      if (done) {
        const a = scheduled.get(Number(done.scheduledEventId))!;
        activities.push({
          workflow,
          activity: a.name,
          local: false,
          attempts: a.attempt ?? 1,
          queued_ms: Math.round((a.startedAt ?? at) - a.at),
          ran_ms: Math.round(at - (a.startedAt ?? at)),
          done_ms: since(at),
          ...(a.lastFailure ? { last_failure: a.lastFailure } : {}),
        });
      }
      const marker = e.markerRecordedEventAttributes;
      const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
      if (data) {
        const la = JSON.parse(Buffer.from(data).toString('utf8')) as {
          activity_type: string;
          attempt: number;
          complete_time: { seconds: number; nanos: number };
        };
        activities.push({ workflow, activity: la.activity_type, local: true, attempts: la.attempt, done_ms: since(ms(la.complete_time)) });
      }
    }
  }
  return { workflowId, workflowTaskMs: Math.round(workflowTaskMs), workflowTasks, activities: activities.sort((a, b) => a.done_ms - b.done_ms) };
}

/**
 * The bare protocol cycle (see the header): COUNT cycles of `one` one after another (after a warm-up), then one cycle
 * of each concurrent client at once, on the targets the gateway's concurrent run used. Times each cycle (ledger
 * submission → proof_result written) and its three transactions, with their gas, and the CPU of the concurrent run.
 */
async function bareRuns(dn: BenchDevnet, one: BenchIdentity, target: Hex, clients: BenchIdentity[], targets: Hex[]) {
  const w = benchWallets(dn, ANVIL_KEY_2)[0]!;
  const proofAnchor = dn.validators!.contracts.proofAnchor as Hex;
  const ledger = createLedgerClient({ url: dn.config.ledgerUrl, pollIntervalMs: 20 });
  // as the gateway's activities do: settle at a quorum, with the same patience
  const quorum = createQuorumClient({ validators: dn.validators!.quorum, clientKey: dn.validators!.clientKey, attestTimeoutMs: 30_000, settle: 'quorum' });
  const setRoot = (await readValidatorSet(w, proofAnchor)).root;
  const ctx = { ledger, quorum, w, proofAnchor, setRoot };
  let n = 0;
  const run = async (who: BenchIdentity, to: Hex) => bareCycle(ctx, who, to, `bare-${++n}-${Date.now()}`);
  await run(one, target); // warm-up
  const seq: Awaited<ReturnType<typeof run>>[] = [];
  for (let i = 0; i < COUNT; i++) seq.push(await run(one, target));
  const conc = await cpuDuring(() => Promise.all(clients.map((c, i) => run(c, targets[i]!))), { database: dn.databaseName });
  const gasMedian = (cs: typeof seq) =>
    Object.fromEntries(
      (['createAnchor', 'executeComprehensiveProof', 'executeGovernanceProofDirect', 'total'] as const).map((k) => [k, median(cs.map((c) => c.gas[k]))]),
    ) as Record<keyof (typeof seq)[number]['gas'], number>;
  return {
    sequential: { ms: seq.map((c) => c.ms), txMs: seq.map((c) => c.txMs), gas: gasMedian(seq) },
    concurrent: { ms: conc.result.map((c) => c.ms) },
    cpu: {
      devnet_cpu_ms: Math.round(conc.devnetMs / COUNT),
      by_process: Object.fromEntries(
        Object.entries(conc.byProcess)
          .filter(([, ms]) => ms / COUNT >= 1)
          .sort((a, b) => b[1] - a[1])
          .map(([k, ms]) => [k, Math.round(ms / COUNT)]),
      ),
    },
  };
}

/** One bare protocol cycle of a single record(bytes32) leg (see the header). */
async function bareCycle(
  c: { ledger: ReturnType<typeof createLedgerClient>; quorum: QuorumClient; w: ChainWriter; proofAnchor: Address; setRoot: Hex },
  who: BenchIdentity,
  target: Hex,
  label: string,
) {
  const intent = buildIntent({ intentId: label, adiUrl: who.adiUrl, legs: [recordLeg(CHAIN, who.account, target, arg(label))] });
  const t0 = performance.now();
  const sub = await c.ledger.signAndSubmit(
    who.dataAccountUrl,
    tx.writeData(intent.parts),
    { privateKey: who.secretKey, signerUrl: who.keyPageUrl },
    { memo: INTENT_MEMO },
  );
  const st = await c.ledger.waitForTransaction(sub.txId, { timeoutMs: 30_000 });
  if (!st.delivered) throw new Error(`bare: intent write ${st.status}`);
  const plan = planIntentAnchor(intent, { chainId: BigInt(CHAIN.chainId), proofAnchor: c.proofAnchor, ledgerTxHash: st.txHash });
  const agg = await c.quorum.attest(attestRequestFor(st.txId, CHAIN.name, plan), {
    message: anchorMessage({ chainId: BigInt(CHAIN.chainId), anchor: plan.anchor, anchorId: plan.anchorId, validatorSetRoot: c.setRoot }),
  });
  const l = plan.legs[0]!;
  const t1 = performance.now();
  const a = await createAnchor(c.w, plan.anchor, {
    commitmentRoot: plan.commitmentRoot,
    operationId: plan.operationId,
    ledgerTxHash: plan.ledgerTxHash,
    leafCount: plan.leafCount,
  });
  const p = await executeComprehensiveProof(c.w, plan.anchor, { anchorId: plan.anchorId, signerBitmap: agg.signerBitmap, signature: agg.aggregateSignature });
  const e = await executeGovernanceProofDirect(c.w, who.account, { target: l.target, value: l.value, data: l.data, proof: proofForLeg(plan, 0) });
  const txMs = performance.now() - t1;
  if (!a.tx || !p.tx || a.tx.status !== 'success' || p.tx.status !== 'success' || e.status !== 'success')
    throw new Error('bare: a transaction was skipped or reverted');
  const req = observeRequestFor(st.txId, CHAIN.name, plan.anchorId, 0, e.txHash);
  const post = await c.quorum.observe(req, { chainId: BigInt(CHAIN.chainId), proofAnchor: c.proofAnchor, validatorSetRoot: c.setRoot });
  await c.quorum.writeResult(req, post);
  const gas = {
    createAnchor: Number(a.tx.gasUsed),
    executeComprehensiveProof: Number(p.tx.gasUsed),
    executeGovernanceProofDirect: Number(e.gasUsed),
    total: 0,
  };
  gas.total = gas.createAnchor + gas.executeComprehensiveProof + gas.executeGovernanceProofDirect;
  return { ms: performance.now() - t0, txMs, gas };
}

(FLAGS.has('batched')
  ? runBatchedBench(COUNT, ARGS.values.wide!, { validators: VALIDATORS === 'processes' ? 'processes' : true, worker: WORKER })
  : main()
).then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
