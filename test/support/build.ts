/**
 * The compiled build (dist/) for tests of the production entry points: `npm run api|worker|validator` run
 * `node dist/src/bin/<name>.js`, so those tests spawn the same files. The build is made on first use when dist/ is
 * missing or older than a source file (a clean clone, an edit since the last build), once at a time across the
 * run's test files (a lock directory), so `npm test` works with or without a prior `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/devnet/temporal.js';
import { PREBUILT_BUNDLE_FILE } from '../../src/temporal/worker.js';

/** Written last by `npm run build`: its age is the build's. */
const STAMP = join(PROJECT_ROOT, 'dist', PREBUILT_BUNDLE_FILE);
const LOCK = join(PROJECT_ROOT, 'dist.build-lock');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'temporal-dev.yml'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function buildIsFresh(): boolean {
  if (!existsSync(STAMP)) return false;
  const inputs = Math.max(newestSource(join(PROJECT_ROOT, 'src')), ...INPUTS.map((f) => statSync(join(PROJECT_ROOT, f)).mtimeMs));
  return statSync(STAMP).mtimeMs >= inputs;
}

function sleepSync(ms: number) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Builds dist/ unless it is up to date with src/; waits for a build another test file has started. */
export function ensureBuild(): void {
  if (buildIsFresh()) return;
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // a lock left by a killed run (older than any build takes) is taken over
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 300_000) rmdirSync(LOCK);
      if (Date.now() > deadline) throw new Error(`${LOCK} held for 5 minutes: remove it if no build is running`);
      sleepSync(500);
    }
  }
  try {
    if (!buildIsFresh()) execFileSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
  } finally {
    rmdirSync(LOCK);
  }
}

/** argv (after `node`) of a production entry point from the build: ['--enable-source-maps', 'dist/src/bin/<name>.js']. */
export function compiledEntry(name: 'api' | 'worker' | 'validator'): string[] {
  ensureBuild();
  return ['--enable-source-maps', join(PROJECT_ROOT, 'dist', 'src', 'bin', `${name}.js`)];
}
