/** The request body of every signature submission (intents, governance operations, co-signatures). */
import { z } from '@hono/zod-openapi';

export const SignatureBody = z
  .object({
    signature: z.string().openapi({ description: 'Ed25519 signature over the raw 32 bytes of the hash to sign, 128 hex' }),
    public_key: z.string().openapi({ description: 'The Ed25519 public key that signed, 64 hex' }),
  })
  .openapi('SignatureSubmission');
