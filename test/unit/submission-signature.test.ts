/**
 * The intent's submission step verifies the client's signature itself, natively, against the hash_to_sign and key
 * the workflow hands it: a signature that does not verify is InvalidSignature (not retried) before the step reads the
 * intent or talks to the ledger. Nothing is given to the step here, so any read or send would throw something else.
 */
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { CycleContext } from '../../src/activities/cycle/context.js';
import { signatureSteps } from '../../src/activities/cycle/signature.js';

const secret = ed25519.utils.randomSecretKey();
const publicKey = Buffer.from(ed25519.getPublicKey(secret)).toString('hex');
const hashToSign = randomBytes(32).toString('hex');
const step = signatureSteps({} as CycleContext).submitIntentSignature;

async function failure(signature: string): Promise<ApplicationFailure> {
  const err = await step({ intentId: 'i', signature, publicKey, hashToSign }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('submitIntentSignature: the signature is verified before anything is read or sent', () => {
  it('a signature over other bytes is InvalidSignature, not retried', async () => {
    const f = await failure(Buffer.from(ed25519.sign(randomBytes(32), secret)).toString('hex'));
    expect(f.type).toBe('InvalidSignature');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/^signature: /);
  });

  it('a signature over the hex text of hash_to_sign says what was signed', async () => {
    const f = await failure(Buffer.from(ed25519.sign(new TextEncoder().encode(hashToSign), secret)).toString('hex'));
    expect(f.type).toBe('InvalidSignature');
    expect(f.message).toContain('sign the raw 32 bytes of hash_to_sign');
  });

  it('a valid signature passes the check (the step then reads the intent)', async () => {
    const signature = Buffer.from(ed25519.sign(Buffer.from(hashToSign, 'hex'), secret)).toString('hex');
    const err = await step({ intentId: 'i', signature, publicKey, hashToSign }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect(err).toBeInstanceOf(TypeError);
  });
});
