/**
 * The shapes of the validators' request bodies (src/protocol/validator-wire.ts), checked before a body reaches the
 * node: a missing or wrongly typed field is a 400 naming it. Only shape and size are checked here; whether the
 * values match the intent on the ledger is the node's question (a 422 with its reason).
 */
import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);
const integer = z.union([z.string().regex(/^\d{1,78}$/, 'must be a decimal integer'), z.number().int().nonnegative()]);

/** A batch's members (ledger tx ids); at most as many as an anchor has leaves (formulas.MAX_LEAVES). */
const batchShape = z.object({ members: z.array(text(512)).min(1).max(128) });

const observeShape = {
  intentTxId: text(512),
  chain: text(128),
  batch: batchShape.optional(),
  anchorId: text(130),
  leafIndex: integer,
  executionTxHash: text(130),
};

export const attestRequestSchema = z.object({
  intentTxId: text(512),
  chain: text(128),
  anchor: z.object({
    proofAnchor: text(130).optional(),
    commitmentRoot: text(130),
    operationId: text(130),
    ledgerTxHash: text(130),
    leafCount: integer,
    anchorId: text(130),
  }),
});

export const attestBatchRequestSchema = z.object({
  chain: text(128),
  batch: batchShape,
  anchor: attestRequestSchema.shape.anchor,
});

export const observeRequestSchema = z.object(observeShape);

export const writeResultRequestSchema = z.object({
  ...observeShape,
  aggregateSignature: text(1024),
  signerBitmap: integer,
});

/** The first problem of a failed parse: the field's dotted path and what is wrong with it. */
export function firstIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join('.') : '(body)';
  return { field, message: issue?.message ?? 'invalid' };
}
