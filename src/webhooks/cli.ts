/**
 * `cli webhook verify|sign`: check a received webhook against its secret (with the standardwebhooks library, the
 * same check any receiver makes), or produce signed headers for a body (to test a receiver).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { signedHeaders, verify } from './signing.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `usage:
  cli webhook verify --secret whsec_… (--headers '<json>' | --header name=value …) (--body '<raw body>' | --body-file path) [--tolerance seconds]
  cli webhook sign   --secret whsec_… --id <webhook-id> (--body '<raw body>' | --body-file path) [--timestamp unix-seconds]`;

function bodyOf(values: { body?: string; 'body-file'?: string }): string {
  if (values.body !== undefined) return values.body;
  if (values['body-file'] !== undefined) return readFileSync(values['body-file'] === '-' ? 0 : values['body-file'], 'utf8');
  throw new Error('--body or --body-file is required');
}

function headersOf(values: { headers?: string; header?: string[] }): Record<string, string> {
  const h: Record<string, string> = {};
  if (values.headers) {
    const parsed = JSON.parse(values.headers) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed)) h[k.toLowerCase()] = String(v);
  }
  for (const pair of values.header ?? []) {
    const i = pair.search(/[=:]/);
    if (i < 1) throw new Error(`--header must be name=value, got ${pair}`);
    h[pair.slice(0, i).trim().toLowerCase()] = pair.slice(i + 1).trim();
  }
  return h;
}

/** Returns the exit code: 0 valid / signed, 1 invalid signature, 2 usage error. */
export function runWebhookCli(argv: string[], io: CliIo, now: () => number = Date.now): number {
  const [command, ...rest] = argv;
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    values = parseArgs({
      args: rest,
      options: {
        secret: { type: 'string' },
        headers: { type: 'string' },
        header: { type: 'string', multiple: true },
        body: { type: 'string' },
        'body-file': { type: 'string' },
        id: { type: 'string' },
        timestamp: { type: 'string' },
        tolerance: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (e) {
    io.err(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const secret = values.secret as string | undefined;
    if (!secret) throw new Error('--secret is required');
    const body = bodyOf(values as { body?: string; 'body-file'?: string });
    if (command === 'sign') {
      const id = values.id as string | undefined;
      if (!id) throw new Error('--id is required');
      const ts = values.timestamp ? Number(values.timestamp) : Math.floor(now() / 1000);
      io.out(JSON.stringify(signedHeaders([secret], id, ts, body), null, 2));
      return 0;
    }
    if (command !== 'verify') throw new Error(`unknown command ${command ?? '(none)'}`);
    const headers = headersOf(values as { headers?: string; header?: string[] });
    const tolerance = values.tolerance !== undefined ? Number(values.tolerance) : undefined;
    if (tolerance !== undefined && !(tolerance >= 0)) throw new Error('--tolerance must be a number of seconds');
    try {
      // the library (what receivers use) has a fixed 5-minute window; for older messages (e.g. a payload from the
      // delivery log) --tolerance uses our own implementation of the same check
      if (tolerance === undefined) new Webhook(secret).verify(body, headers);
      else verify(secret, headers, body, { toleranceSeconds: tolerance, now: Math.floor(now() / 1000) });
    } catch (e) {
      io.err(`invalid: ${(e as Error).message}`);
      return 1;
    }
    let summary = '';
    try {
      const parsed = JSON.parse(body) as { type?: string; id?: string; resource_id?: string; sequence?: number };
      const parts = [parsed.type, parsed.resource_id && `resource ${parsed.resource_id}`, parsed.sequence !== undefined && `sequence ${parsed.sequence}`];
      summary = parts
        .filter(Boolean)
        .map((p) => ` ${p}`)
        .join('');
    } catch {
      // not JSON: the signature is still valid
    }
    io.out(`valid: webhook-id ${headers['webhook-id']}${summary}`);
    return 0;
  } catch (e) {
    io.err(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
}
