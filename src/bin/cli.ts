/** Operator / integrator command line: `tsx src/bin/cli.ts <group> <command> [options]`. */
import { runWebhookCli } from '../webhooks/cli.js';

const io = { out: (l: string) => process.stdout.write(l + '\n'), err: (l: string) => process.stderr.write(l + '\n') };
const [group, ...rest] = process.argv.slice(2);
const groups: Record<string, (argv: string[]) => number> = {
  webhook: (argv) => runWebhookCli(argv, io),
};
const run = group ? groups[group] : undefined;
if (!run) {
  io.err(`usage: cli <${Object.keys(groups).join('|')}> <command> [options]`);
  process.exit(2);
}
process.exitCode = run(rest);
