/** Operator / integrator command line: `tsx src/bin/cli.ts <group> <command> [options]`. */
import { runVerifyBundleCli } from '../proof/cli.js';
import { runWebhookCli } from '../webhooks/cli.js';

const io = { out: (l: string) => process.stdout.write(`${l}\n`), err: (l: string) => process.stderr.write(`${l}\n`) };
const [group, ...rest] = process.argv.slice(2);
const groups: Record<string, (argv: string[]) => number | Promise<number>> = {
  webhook: (argv) => runWebhookCli(argv, io),
  'verify-bundle': (argv) => runVerifyBundleCli(argv, io),
};
const run = group ? groups[group] : undefined;
if (!run) {
  io.err(`usage: cli <${Object.keys(groups).join('|')}> <command> [options]`);
  process.exit(2);
}
Promise.resolve(run(rest)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    io.err(`error: ${(e as Error).message}`);
    process.exitCode = 2;
  },
);
