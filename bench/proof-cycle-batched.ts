/**
 * The batched class against the standard one, in one run on one devnet (bench/lib/devnet.ts, the 7 validators):
 * single-leg TestTarget.record(bytes32) calls with expectedEvents + expectedState on ethereum-sepolia, timed from
 * POST /v1/transaction/{id}/signature until GET /v1/transaction/{id} shows `completed`:
 *   - standard sequential: `count` cycles one after another (one identity);
 *   - standard, `wide` at once; batched, `count` at once; batched, `wide` at once (one identity and one TestTarget
 *     each, as independent clients). Each concurrent run's cycles per second = intents / wall time of the run, and
 *     the CPU per cycle of the devnet's processes during it, by process.
 * The batch window is BATCH_WINDOW_MS (default 2,000 ms), read by the worker at start.
 *
 * Targets: batched p50 of `count` concurrent ≤ the window + the standard sequential p50; cycles per second of
 * `wide` concurrent batched ≥ 2 × standard's.
 *
 *   npx tsx bench/proof-cycle.ts batched [count=20] [wide=40] [processes] [worker-process]
 *   (processes: the 7 validators each in its own process; worker-process: the worker as its own process, with
 *   DATABASE_URL; with DATABASE_URL the database is PostgreSQL, else in-memory PGlite in this process)
 */
import type { Address } from 'viem';
import { DEFAULT_BATCH_SETTINGS } from '../src/activities/cycle/batch.js';
import {
  arg,
  benchWallets,
  CHAINS,
  cpuDuring,
  createBenchIdentity,
  deployTestTargets,
  fundAccount,
  pct,
  recordLeg,
  stageSplit,
  startBenchDevnet,
  submitIntent,
  waitCompleted,
  type BenchDevnet,
  type BenchIdentity,
  type Json,
} from './lib/devnet.js';

const CHAIN = CHAINS[0];

interface Run {
  ms: number[];
  /** each intent as GET answered it once completed */
  intents: Json[];
  wallMs: number;
  perSecond: number;
  anchors: number;
  /** CPU ms per cycle of the devnet's processes during the run, by process (cpuDuring) */
  cpuPerCycle: Record<string, number>;
}

async function prepare(dn: BenchDevnet, who: BenchIdentity, target: Address, proofClass: string, n: number): Promise<Json> {
  const legs = [recordLeg(CHAIN, who.account, target, arg(`batched-bench-${n}-${Date.now()}`))];
  const r = await dn.call('POST', '/v1/transaction', { identity_id: who.id, intent: { adiUrl: who.adiUrl, legs }, proof_class: proofClass });
  if (r.status !== 201) throw new Error(`prepare: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function runBatchedBench(
  count: number,
  wide: number,
  where: { validators: true | 'processes'; worker: 'in-process' | 'process' } = { validators: true, worker: 'in-process' },
): Promise<void> {
  const windowMs = Number(process.env.BATCH_WINDOW_MS ?? DEFAULT_BATCH_SETTINGS.windowMs);
  const dn = await startBenchDevnet({ name: 'bench-batched', ...where });
  try {
    const wallets = benchWallets(dn);
    const clients = await Promise.all(Array.from({ length: wide }, () => createBenchIdentity(dn, 1000, 200)));
    for (const c of clients) await fundAccount(wallets.slice(0, 1), c.account);
    const targets: Address[] = [];
    for (let i = 0; i < wide; i++) targets.push((await deployTestTargets(wallets.slice(0, 1)))[0]!);
    let n = 0;

    const cycle = async (who: BenchIdentity, target: Address, proofClass: string, ready?: Promise<void>) => {
      const p = await prepare(dn, who, target, proofClass, ++n);
      await ready;
      const t0 = performance.now();
      await submitIntent(dn, who, p);
      const done = await waitCompleted(dn, p.intent_id, 300_000);
      return { ms: performance.now() - t0, intent: done as Json };
    };
    const concurrent = async (k: number, proofClass: string): Promise<Run> => {
      let go!: () => void;
      const ready = new Promise<void>((r) => (go = r));
      const pending = clients.slice(0, k).map((c, i) => cycle(c, targets[i]!, proofClass, ready));
      await new Promise((r) => setTimeout(r, 2000)); // every prepare done
      const t0 = performance.now();
      go();
      const cpu = await cpuDuring(() => Promise.all(pending), { database: dn.databaseName });
      const out = cpu.result;
      const wallMs = performance.now() - t0;
      const anchors = new Set(out.map((c) => c.intent.legs[0].anchor_id)).size;
      const cpuPerCycle = Object.fromEntries(
        [['all of the devnet', cpu.devnetMs] as const, ...Object.entries(cpu.byProcess).sort((a, b) => b[1] - a[1])]
          .filter(([, ms]) => ms / k >= 1)
          .map(([name, ms]) => [name, Math.round(ms / k)]),
      );
      return { ms: out.map((c) => c.ms), intents: out.map((c) => c.intent), wallMs, perSecond: k / (wallMs / 1000), anchors, cpuPerCycle };
    };

    await cycle(clients[0]!, targets[0]!, 'standard'); // warm-up
    await cycle(clients[0]!, targets[0]!, 'batched');
    const seq: number[] = [];
    for (let i = 0; i < count; i++) seq.push((await cycle(clients[0]!, targets[0]!, 'standard')).ms);
    const standardWide = await concurrent(wide, 'standard');
    const batchedCount = await concurrent(count, 'batched');
    const batchedWide = await concurrent(wide, 'batched');

    const seqP50 = Math.round(pct(seq, 0.5));
    const row = (name: string, r: Run | number[]) => {
      const ms = Array.isArray(r) ? r : r.ms;
      return {
        run: name,
        p50_ms: Math.round(pct(ms, 0.5)),
        p95_ms: Math.round(pct(ms, 0.95)),
        cycles_per_s: Array.isArray(r) ? Number((1000 / pct(ms, 0.5)).toFixed(2)) : Number(r.perSecond.toFixed(2)),
        anchors: Array.isArray(r) ? ms.length : r.anchors,
      };
    };
    console.table([
      row(`standard sequential (${count})`, seq),
      row(`standard ${wide} concurrent`, standardWide),
      row(`batched ${count} concurrent`, batchedCount),
      row(`batched ${wide} concurrent`, batchedWide),
    ]);
    for (const [name, r] of [
      [`standard ${wide} concurrent`, standardWide],
      [`batched ${count} concurrent`, batchedCount],
      [`batched ${wide} concurrent`, batchedWide],
    ] as const) {
      console.log(`Where the time goes (${name}; median and max ms per stage, from intents.submitted_at and intent_chains.step_times):`);
      console.table(await stageSplit(dn, r.intents));
    }
    console.log('CPU ms per cycle during each concurrent run, by process (from /proc; PostgreSQL: the backends of this database):');
    const names = [...new Set([standardWide, batchedCount, batchedWide].flatMap((r) => Object.keys(r.cpuPerCycle)))];
    console.table(
      names.map((process) => ({
        process,
        [`standard ${wide}`]: standardWide.cpuPerCycle[process] ?? 0,
        [`batched ${count}`]: batchedCount.cpuPerCycle[process] ?? 0,
        [`batched ${wide}`]: batchedWide.cpuPerCycle[process] ?? 0,
      })),
    );
    const latency = pct(batchedCount.ms, 0.5) <= windowMs + seqP50;
    const throughput = batchedWide.perSecond >= 2 * standardWide.perSecond;
    console.log(
      `batched ${count} concurrent p50 ${Math.round(pct(batchedCount.ms, 0.5))} ms, target ≤ window ${windowMs} + standard sequential p50 ${seqP50} = ${windowMs + seqP50}: ${latency ? 'holds' : 'MISSED'}`,
    );
    console.log(
      `cycles/s ${wide} concurrent: batched ${batchedWide.perSecond.toFixed(2)}, standard ${standardWide.perSecond.toFixed(2)} (×${(batchedWide.perSecond / standardWide.perSecond).toFixed(2)}), target ≥ ×2: ${throughput ? 'holds' : 'MISSED'}`,
    );
    console.log(
      JSON.stringify({
        window_ms: windowMs,
        standard_sequential_p50_ms: seqP50,
        batched_concurrent_p50_ms: Math.round(pct(batchedCount.ms, 0.5)),
        standard_wide_cycles_per_s: Number(standardWide.perSecond.toFixed(2)),
        batched_wide_cycles_per_s: Number(batchedWide.perSecond.toFixed(2)),
        anchors: { standard_wide: standardWide.anchors, batched_count: batchedCount.anchors, batched_wide: batchedWide.anchors },
        cpu_ms_per_cycle: { standard_wide: standardWide.cpuPerCycle, batched_count: batchedCount.cpuPerCycle, batched_wide: batchedWide.cpuPerCycle },
        pass: latency && throughput,
      }),
    );
  } finally {
    await dn.stop();
  }
}
