/**
 * Command-line arguments of the bench scripts, checked at start-up, before any devnet is made: a bad argument
 * prints what was wrong and the usage line to stderr and exits with status 2 (no stack trace).
 *
 *   const args = benchArgs('npx tsx bench/x.ts [count=20] [fast]', { positional: [{ name: 'count', default: 20, min: 1 }], flags: ['fast'] });
 *   args.count, args.flags.has('fast')
 */

export interface IntArg {
  name: string;
  default: number;
  min: number;
  max?: number;
}

export function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\nusage: ${usage}\n`);
  process.exit(2);
}

/**
 * `positional` whole numbers in order (each optional, taken from the arguments that are numbers), and `flags` words
 * that may come anywhere; anything else is refused.
 */
export function benchArgs(
  usage: string,
  spec: { positional?: IntArg[]; flags?: string[] },
  argv: string[] = process.argv.slice(2),
): { values: Record<string, number>; flags: Set<string> } {
  const positional = spec.positional ?? [];
  const known = new Set(spec.flags ?? []);
  const values: Record<string, number> = {};
  const flags = new Set<string>();
  let next = 0;
  for (const raw of argv) {
    if (known.has(raw)) {
      flags.add(raw);
      continue;
    }
    const arg = positional[next];
    if (!arg) {
      const expected = [...known].join(', ');
      usageError(usage, `unexpected argument "${raw}"${expected ? `: the options are ${expected}` : ''}`);
    }
    const range = arg.max === undefined ? `a whole number of at least ${arg.min}` : `a whole number from ${arg.min} to ${arg.max}`;
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < arg.min || (arg.max !== undefined && n > arg.max)) usageError(usage, `${arg.name} must be ${range}, got "${raw}"`);
    values[arg.name] = n;
    next++;
  }
  for (const arg of positional) values[arg.name] ??= arg.default;
  return { values, flags };
}
