/**
 * Intents and their per-chain proof cycles. Every status change that an integrator hears about is
 * written with its event (src/db/events.ts) in the same transaction.
 */
import { and, asc, eq, gt, lte, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { ChainCycleRecord } from '../protocol/cycle-record.js';
import type { Db } from './client.js';
import { recordEvent } from './events.js';
import { ledgerHashForm, type ExecutionPayload } from '../webhooks/stored-forms.js';
import { preparedPerDb } from './prepared.js';
import { releaseSpend } from './provider.js';
import { intentChains, intents, proofs, type PreparedIntentTx, type SigningData } from './schema.js';
import { UUID } from './ids.js';

export type IntentRow = typeof intents.$inferSelect;
export type NewIntentRow = typeof intents.$inferInsert;
export type IntentChainRow = typeof intentChains.$inferSelect;
export type ProofRow = typeof proofs.$inferSelect;

/** The ledger transaction a row records as submitted, if it records one. */
export function recordedSubmissionOf(row: IntentRow | undefined): { txId: string; txHash: string } | undefined {
  return row?.ledgerTxId && row.txHash ? { txId: row.ledgerTxId, txHash: row.txHash } : undefined;
}

export const INTENT_STATUSES = ['signing_required', 'submitted', 'completed', 'failed', 'expired'] as const;
export const INTENT_TERMINAL = ['completed', 'failed', 'expired'] as const;
/** the order of the stages of one chain's cycle; an intent is at the least advanced stage of its chains */
export const CYCLE_STAGES = ['pending', 'attesting', 'anchoring', 'executing', 'observing', 'recording', 'completed', 'failed'] as const;
export type CycleStage = (typeof CYCLE_STAGES)[number];

export interface IntentDocument {
  /** the four canonical JSON parts written to the ledger */
  parts: string[];
}

/**
 * The stored forms of an intent's prepared ledger transaction: what rebuilds it byte for byte at submission, and what
 * the client signs. `tx` is what stays of the transaction when it is prepared again (fresh signing data).
 */
export function storedSigning(
  intentId: string,
  tx: Pick<PreparedIntentTx, 'principal' | 'memo' | 'expireAt' | 'publicKey'>,
  p: Pick<PreparedIntentTx, 'signerUrl' | 'signerVersion' | 'timestamp' | 'txId' | 'txHash' | 'hashToSign'>,
): { prepared: PreparedIntentTx; signingData: SigningData } {
  return {
    prepared: {
      principal: tx.principal,
      memo: tx.memo,
      expireAt: tx.expireAt,
      publicKey: tx.publicKey,
      signerUrl: p.signerUrl,
      signerVersion: p.signerVersion,
      timestamp: p.timestamp,
      txId: p.txId,
      txHash: p.txHash,
      hashToSign: p.hashToSign,
    },
    signingData: {
      request_id: intentId,
      transaction_hash: p.txHash,
      hash_to_sign: p.hashToSign,
      public_key: tx.publicKey,
      signer_key_page: p.signerUrl,
      key_page_version: p.signerVersion,
    },
  };
}

/** The columns prepare sets on a new intent (the rest start at their defaults). */
const INSERT_COLUMNS = [
  'id',
  'orgId',
  'identityId',
  'intentType',
  'intent',
  'operationId',
  'signingData',
  'prepared',
  'signerPublicKey',
  'signerKeyPage',
  'expiresAt',
  'signingMode',
] as const;

/** What prepare stores of a new intent. */
export type IntentInsert = Required<Pick<NewIntentRow, (typeof INSERT_COLUMNS)[number]>>;

// every prepare inserts one row: built once per database, each value encoded by its column
const insertIntentRow = preparedPerDb((db) =>
  db
    .insert(intents)
    .values(Object.fromEntries(INSERT_COLUMNS.map((c) => [c, sql.placeholder(c)])) as unknown as NewIntentRow)
    .returning()
    .prepare('insert_intent'),
);

export async function insertIntent(db: Db, row: IntentInsert): Promise<IntentRow> {
  const [r] = await insertIntentRow(db).execute(row);
  return r!;
}

// by id: what the workflows' activities read at most of their steps
const intentById = preparedPerDb((db) =>
  db
    .select()
    .from(intents)
    .where(eq(intents.id, sql.placeholder('id')))
    .prepare('intent_by_id'),
);

export async function getIntent(db: Db, id: string): Promise<IntentRow | undefined> {
  const [r] = await intentById(db).execute({ id });
  return r;
}

/** The intent of `orgId` by id; undefined for an unknown id, a malformed one or another organization's. */
export async function getOrgIntent(db: Db, orgId: string, id: string): Promise<IntentRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [r] = await db
    .select()
    .from(intents)
    .where(and(eq(intents.id, id), eq(intents.orgId, orgId)));
  return r;
}

export async function getIntentChains(db: Db, intentId: string): Promise<IntentChainRow[]> {
  return db.select().from(intentChains).where(eq(intentChains.intentId, intentId)).orderBy(intentChains.chain);
}

/** A chain's cycle as the intent's view shows it. */
export type IntentChainView = Pick<IntentChainRow, 'chain' | 'record'>;

/**
 * What an intent's API view reads (GET /v1/transaction/{id} on every poll, and the list), as one JSON value that
 * Postgres builds: the intent's columns but for the prepared transaction (only its id) and the canonical parts (only
 * the first, where the proof class is), which are most of the row's bytes and which the view does not show; the
 * times as Date#toISOString writes them; and its chains' cycles. One column instead of two dozen: the driver sets up
 * no parser per column and the ORM maps nothing.
 */
export interface IntentViewRow {
  id: string;
  identityId: string;
  status: string;
  stage: string;
  intentType: string;
  operationId: string;
  signingMode: string;
  signingData: SigningData;
  signerPublicKey: string;
  signerKeyPage: string;
  ledgerTxId: string | null;
  txHash: string | null;
  proofId: string | null;
  errorMessage: string | null;
  /** ISO 8601 UTC with milliseconds */
  expiresAt: string;
  submittedAt: string | null;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** the prepared ledger transaction's id */
  preparedTxId: string;
  /** the first canonical part (intentData); null for a ledger token transfer */
  intentData: string | null;
  /** the stored document without its canonical parts: { legs } of a multi-leg intent, a transfer's document */
  document: Record<string, unknown>;
  /** by chain name */
  chains: IntentChainView[];
}

/**
 * A time as JS's Date#toISOString writes it (UTC, milliseconds, Z), or null. Truncated to the millisecond first, as a
 * Date read from the driver is (to_char's own rounding of MS differs between PostgreSQL versions).
 */
const isoTime = (column: AnyPgColumn) => sql`to_char(date_trunc('milliseconds', ${column}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The view as one json (text) value, not jsonb: the server writes it out as it builds it, where jsonb would build a
 * binary document of the stored records first and print that (twice the server's CPU for an intent with chains).
 */
export const intentViewJson = sql<IntentViewRow>`json_build_object(
  'id', ${intents.id}, 'identityId', ${intents.identityId}, 'status', ${intents.status}, 'stage', ${intents.stage},
  'intentType', ${intents.intentType}, 'operationId', ${intents.operationId}, 'signingMode', ${intents.signingMode},
  'signingData', ${intents.signingData}, 'signerPublicKey', ${intents.signerPublicKey}, 'signerKeyPage', ${intents.signerKeyPage},
  'ledgerTxId', ${intents.ledgerTxId}, 'txHash', ${intents.txHash}, 'proofId', ${intents.proofId}, 'errorMessage', ${intents.errorMessage},
  'expiresAt', ${isoTime(intents.expiresAt)}, 'submittedAt', ${isoTime(intents.submittedAt)}, 'completedAt', ${isoTime(intents.completedAt)},
  'createdAt', ${isoTime(intents.createdAt)}, 'updatedAt', ${isoTime(intents.updatedAt)},
  'preparedTxId', ${intents.prepared}->'txId', 'intentData', ${intents.intent}->'parts'->0, 'document', ${intents.intent} - 'parts',
  'chains', (select coalesce(json_agg(json_build_object('chain', ${intentChains.chain}, 'record', ${intentChains.record}) order by ${intentChains.chain}), '[]'::json)
             from ${intentChains} where ${intentChains.intentId} = ${intents.id}))`;

const orgIntentView = preparedPerDb((db) =>
  db
    .select({ view: intentViewJson })
    .from(intents)
    .where(and(eq(intents.id, sql.placeholder('id')), eq(intents.orgId, sql.placeholder('orgId'))))
    .prepare('org_intent_view'),
);

/** The view of an intent of `orgId`, its chains included, in one round trip (what GET /v1/transaction/{id} reads on every poll). */
export async function getOrgIntentView(db: Db, orgId: string, id: string): Promise<IntentViewRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [r] = await orgIntentView(db).execute({ id, orgId });
  return r?.view;
}

/** Creates the chain's cycle row unless it exists; returns the row as stored. */
export async function ensureIntentChain(db: Db, intentId: string, chain: string, record: ChainCycleRecord): Promise<IntentChainRow> {
  await db.insert(intentChains).values({ intentId, chain, record }).onConflictDoNothing();
  const [r] = await db
    .select()
    .from(intentChains)
    .where(and(eq(intentChains.intentId, intentId), eq(intentChains.chain, chain)));
  return r!;
}

/** An intent's chain cycles with each row's version (its xmin, which every update of the row changes). */
export type VersionedChainRow = IntentChainRow & { version: string };

// every chain of an intent with its row version: the read of updateIntentChain and of each cycle step
const chainsOfIntent = preparedPerDb((db) =>
  db
    .select({
      intentId: intentChains.intentId,
      chain: intentChains.chain,
      stage: intentChains.stage,
      record: intentChains.record,
      stepTimes: intentChains.stepTimes,
      updatedAt: intentChains.updatedAt,
      version: sql<string>`xmin::text`,
    })
    .from(intentChains)
    .where(eq(intentChains.intentId, sql.placeholder('intentId')))
    .orderBy(intentChains.chain)
    .prepare('chains_of_intent'),
);

// the intent with every chain of it (row versions included), in one round trip: what each cycle step reads first
const intentWithChains = preparedPerDb((db) =>
  db
    .select({
      intent: intents,
      chains: sql<(Omit<VersionedChainRow, 'updatedAt'> & { updatedAt: string })[]>`(select coalesce(json_agg(json_build_object('intentId', c.intent_id,
        'chain', c.chain, 'stage', c.stage, 'record', c.record, 'stepTimes', c.step_times, 'updatedAt', c.updated_at, 'version', c.xmin::text)
        order by c.chain), '[]'::json) from ${intentChains} c where c.intent_id = ${intents}.id)`,
    })
    .from(intents)
    .where(eq(intents.id, sql.placeholder('id')))
    .prepare('intent_with_chains'),
);

/** The intent and its chain cycles with their row versions (updateIntentChain's `known`); undefined for an unknown id. */
export async function getIntentWithChains(db: Db, id: string): Promise<{ row: IntentRow; chains: VersionedChainRow[] } | undefined> {
  const [r] = await intentWithChains(db).execute({ id });
  return r && { row: r.intent, chains: r.chains.map((c) => ({ ...c, updatedAt: new Date(c.updatedAt) })) };
}

/** The intent's chain cycles as stored, each with its row version (updateIntentChain's `known`). */
export async function getVersionedIntentChains(db: Db, intentId: string): Promise<VersionedChainRow[]> {
  return chainsOfIntent(db).execute({ intentId });
}

/** A change of a chain cycle: its record (a function changing only its argument), its stage, a step time. */
export interface ChainChange {
  record?: (r: ChainCycleRecord) => void;
  stage?: CycleStage;
  step?: string;
}

// the stages in their order, as one parameter (the intent's stage is the first of them that one of its live chains is at)
const STAGE_ORDER = CYCLE_STAGES.join(',');

/**
 * Read-modify-write of one chain's cycle record, with an optional stage and step time; with a stage, the intent's
 * own stage follows (the least advanced of its chains that have not failed, as they stand when it is written; a
 * chain not yet started leaves it). Two round trips: the intent's chains with their row versions (none when the
 * caller passes them as `known` with this chain's), then one statement that writes the row only if its version is
 * still the one read, and the intent's stage with it. Another writer in between makes the version differ: the
 * change is applied again to the row as it is now (`change.record` must only change its argument). `known` is kept
 * current: its entry for the chain takes the row as written and its new version, so a caller can pass it to the
 * next update of the same cycle.
 */
export async function updateIntentChain(
  db: Db,
  intentId: string,
  chain: string,
  change: ChainChange,
  known?: readonly VersionedChainRow[],
): Promise<ChainCycleRecord> {
  for (let attempt = 1; ; attempt++) {
    const given = attempt === 1 && known?.some((r) => r.chain === chain) ? known : undefined;
    const rows = given ?? (await getVersionedIntentChains(db, intentId));
    const row = rows.find((r) => r.chain === chain);
    if (!row) throw new Error(`no cycle of intent ${intentId} on ${chain}`);
    const record = structuredClone(row.record);
    change.record?.(record);
    const stage = change.stage ?? row.stage;
    const stepTimes = change.step ? { ...row.stepTimes, [change.step]: new Date().toISOString() } : row.stepTimes;
    const now = new Date().toISOString();
    const res = await db.execute(sql`with moved as (
        update ${intentChains} set stage = ${stage}, record = ${JSON.stringify(record)}::jsonb, step_times = ${JSON.stringify(stepTimes)}::jsonb,
          updated_at = ${now}::timestamptz
        where intent_id = ${intentId} and chain = ${chain} and xmin = ${row.version}::xid returning xmin::text as version),
      least as (
        select coalesce((select s.stage from unnest(string_to_array(${STAGE_ORDER}, ',')) with ordinality as s(stage, ord)
          where s.stage <> 'failed' and s.stage in (select case when c.chain = ${chain} then ${stage} else c.stage end from ${intentChains} c where c.intent_id = ${intentId})
          order by s.ord limit 1), 'failed') as stage),
      lifted as (
        update ${intents} set stage = least.stage, updated_at = ${now}::timestamptz from least
        where id = ${intentId} and status = 'submitted' and ${change.stage !== undefined}::boolean and least.stage not in ('pending', 'completed')
          and exists (select 1 from moved) returning 1)
      select (select version from moved) as version`);
    const [out] = (res as unknown as { rows?: { version: string | null }[] }).rows ?? (res as unknown as { version: string | null }[]);
    if (out?.version) {
      const entry = known?.find((r) => r.chain === chain);
      if (entry) Object.assign(entry, { record: structuredClone(record), stage, stepTimes, updatedAt: new Date(now), version: out.version });
      return record;
    }
    if (attempt >= 100) throw new Error(`the cycle of intent ${intentId} on ${chain} kept changing under ${attempt} attempts to update it`);
  }
}

/**
 * signing_required → submitted, with transaction.submitted (carrying the co-signing progress read after the
 * submission, when there is one); a no-op when already submitted.
 */
export async function markIntentSubmitted(
  db: Db,
  id: string,
  p: {
    txId: string;
    txHash: string;
    signingProgress?: { collected_signatures: number; required_signatures: number; awaiting_authorities: string[]; is_ready: boolean } | null;
  },
): Promise<IntentRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(intents)
      .set({ status: 'submitted', stage: 'submitted', ledgerTxId: p.txId, txHash: p.txHash, submittedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(intents.id, id), eq(intents.status, 'signing_required')))
      .returning();
    if (!row) {
      const [cur] = await tx.select().from(intents).where(eq(intents.id, id));
      return cur!;
    }
    await recordEvent(tx as unknown as Db, {
      orgId: row.orgId,
      type: 'transaction.submitted',
      resourceId: row.id,
      data: {
        intent_id: row.id,
        identity_id: row.identityId,
        operation_id: row.operationId,
        tx_hash: ledgerHashForm(p.txHash),
        ...(p.signingProgress ? { signing_progress: p.signingProgress } : {}),
      },
    });
    return row;
  });
}

export async function setIntentStage(db: Db, id: string, stage: string): Promise<void> {
  await db.update(intents).set({ stage, updatedAt: new Date() }).where(eq(intents.id, id));
}

/** Terminal: failed or expired, with transaction.failed; a no-op when the intent already ended. */
export async function markIntentFailed(db: Db, id: string, p: { status: 'failed' | 'expired'; stage: string; error: string; proofId?: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(intents)
      .set({ status: p.status, stage: 'failed', errorMessage: p.error, proofId: p.proofId ?? null, completedAt: new Date(), updatedAt: new Date() })
      // only an unsigned intent expires; one the ledger took goes through its cycle
      .where(
        and(
          eq(intents.id, id),
          p.status === 'expired' ? eq(intents.status, 'signing_required') : sql`${intents.status} not in ('completed', 'failed', 'expired')`,
        ),
      )
      .returning();
    if (!row) return;
    // an intent the ledger never took spent nothing (expired unsigned, or its provider signature could not be made)
    if (!row.submittedAt) await releaseSpend(tx as unknown as Db, row.id);
    await recordEvent(tx as unknown as Db, {
      orgId: row.orgId,
      type: 'transaction.failed',
      resourceId: row.id,
      data: { intent_id: row.id, identity_id: row.identityId, operation_id: row.operationId, stage: p.stage, error: p.error },
    });
  });
}

/** Unsigned intents whose expires_at is at or before `now`, soonest first (the expiry sweep's work). */
export async function dueUnsignedIntents(db: Db, now: Date, limit: number): Promise<IntentRow[]> {
  return db
    .select()
    .from(intents)
    .where(and(eq(intents.status, 'signing_required'), lte(intents.expiresAt, now)))
    .orderBy(asc(intents.expiresAt))
    .limit(limit);
}

/** The earliest expires_at after `now` of an unsigned intent; undefined when none waits. */
export async function nextUnsignedExpiry(db: Db, now: Date): Promise<Date | undefined> {
  const [row] = await db
    .select({ at: intents.expiresAt })
    .from(intents)
    .where(and(eq(intents.status, 'signing_required'), gt(intents.expiresAt, now)))
    .orderBy(asc(intents.expiresAt))
    .limit(1);
  return row?.at;
}

/** Terminal success: the proof row and status completed with transaction.completed, in one transaction. */
export async function completeIntent(
  db: Db,
  id: string,
  p: { proof: { bundle: string; bundleHash: string; custody: unknown[] }; executions: ExecutionPayload[] },
): Promise<string> {
  return db.transaction(async (tx) => {
    const [cur] = await tx.select().from(intents).where(eq(intents.id, id)).for('update');
    if (!cur) throw new Error(`intent ${id} not found`);
    if (cur.status === 'completed' && cur.proofId) return cur.proofId;
    const [proof] = await tx
      .insert(proofs)
      .values({ orgId: cur.orgId, intentId: id, bundle: p.proof.bundle, bundleHash: p.proof.bundleHash, custody: p.proof.custody })
      .onConflictDoUpdate({ target: proofs.intentId, set: { bundle: p.proof.bundle, bundleHash: p.proof.bundleHash, custody: p.proof.custody } })
      .returning({ id: proofs.id });
    await tx
      .update(intents)
      .set({ status: 'completed', stage: 'completed', proofId: proof!.id, errorMessage: null, completedAt: new Date(), updatedAt: new Date() })
      .where(eq(intents.id, id));
    await recordEvent(tx as unknown as Db, {
      orgId: cur.orgId,
      type: 'transaction.completed',
      resourceId: id,
      data: { intent_id: id, identity_id: cur.identityId, operation_id: cur.operationId, proof_id: proof!.id, executions: p.executions },
    });
    return proof!.id;
  });
}

/** The proof row of a partly completed intent (some legs failed): stored, but the intent fails. */
export async function storePartialProof(db: Db, id: string, p: { bundle: string; bundleHash: string; custody: unknown[] }): Promise<string> {
  const [cur] = await db.select({ orgId: intents.orgId }).from(intents).where(eq(intents.id, id));
  const [proof] = await db
    .insert(proofs)
    .values({ orgId: cur!.orgId, intentId: id, ...p })
    .onConflictDoUpdate({ target: proofs.intentId, set: p })
    .returning({ id: proofs.id });
  return proof!.id;
}

export async function getOrgProof(db: Db, orgId: string, id: string): Promise<ProofRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [r] = await db
    .select()
    .from(proofs)
    .where(and(eq(proofs.id, id), eq(proofs.orgId, orgId)));
  return r;
}

/** Appends to a proof's custody chain under a row lock: concurrent appends each link to the one before. */
export async function appendProofCustody<E>(db: Db, id: string, append: (events: E[]) => E[]): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ custody: proofs.custody }).from(proofs).where(eq(proofs.id, id)).for('update');
    if (row)
      await tx
        .update(proofs)
        .set({ custody: append(row.custody as E[]) })
        .where(eq(proofs.id, id));
  });
}

/** The intent of `orgId` whose ledger transaction or one of whose chain transactions has this hash. */
export async function findOrgIntentByTxHash(db: Db, orgId: string, hash: string): Promise<IntentRow | undefined> {
  const h = hash.toLowerCase().replace(/^0x/, '');
  const [byLedger] = await db
    .select()
    .from(intents)
    .where(and(eq(intents.orgId, orgId), sql`lower(${intents.txHash}) = ${h}`));
  if (byLedger) return byLedger;
  const [byChain] = await db
    .select({ intentId: intentChains.intentId })
    .from(intentChains)
    .innerJoin(intents, eq(intents.id, intentChains.intentId))
    .where(
      and(
        eq(intents.orgId, orgId),
        // exactly one of the cycle's transactions: createAnchor, executeComprehensiveProof or a leg's execution
        sql`(lower(${intentChains.record}->>'createAnchorTx') = ${`0x${h}`} or lower(${intentChains.record}->>'proveTx') = ${`0x${h}`}
          or exists (select 1 from jsonb_array_elements(${intentChains.record}->'legs') l where lower(l->>'executionTx') = ${`0x${h}`}))`,
      ),
    );
  return byChain ? getIntent(db, byChain.intentId) : undefined;
}
