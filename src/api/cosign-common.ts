/** The request body of every signature submission (intents, governance operations, co-signatures). */
import { z } from '@hono/zod-openapi';
import { HEX64_PATTERN } from './schemas/common.js';

export const SignatureBody = z
  .object({
    signature: z.string().openapi({ description: 'Ed25519 signature over the raw 32 bytes of the hash to sign, 128 hex', pattern: '^[0-9a-fA-F]{128}$' }),
    public_key: z.string().openapi({ description: 'The Ed25519 public key that signed, 64 hex', pattern: HEX64_PATTERN }),
  })
  .openapi('SignatureSubmission');
