/**
 * The console's browser code, bundled by esbuild (installed with tsx) from src/console/browser/ into one ES module
 * and one stylesheet, the first time the console asks for them; the result is kept for the life of the process.
 * Bundling from the TypeScript sources works the same whether the API runs from source (tsx) or from a compiled
 * build: the sources are found from the package root, and the dependencies come from the lock file's node_modules.
 *
 * The in-browser verifier is src/proof/verify.ts itself, built for the browser: the modules that only a server
 * needs are swapped for browser stand-ins (./shims) at bundle time:
 *   src/protocol/ed25519.ts (node:crypto)             -> @noble/curves Ed25519
 *   src/proof/verify/online.ts, src/net/fetch.ts       -> offline (throw if ever called with an address)
 *   mcl-wasm                                           -> absent (bls.ts falls back to @noble/curves)
 *   'accumulate.js' (the package root)                 -> the parts the verifier uses (core, messaging, URL, keys)
 *   the global Buffer                                  -> a Uint8Array with the few operations they use
 *   'zod' in src/proof/bundle.ts                       -> the constructors it calls, by name (no locales)
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface ConsoleAsset {
  /** versioned file name (content hash) */
  name: string;
  body: Uint8Array;
  contentType: string;
  gzipBytes: number;
}

export interface ConsoleBundle {
  script: ConsoleAsset;
  style: ConsoleAsset;
}

/** The whole console's JavaScript, gzipped, stays under this (checked at bundle time and by the browser test). */
export const CONSOLE_JS_GZIP_BUDGET = 200 * 1024;

const ENTRY = join('src', 'console', 'browser', 'main.ts');

/**
 * The package root: the nearest directory above this module that holds the console's sources (this module is
 * src/console/bundle.ts from source, dist/src/console/bundle.js compiled).
 */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ENTRY))) return dir;
    if (dirname(dir) === dir) throw new Error(`the console's sources (${ENTRY}) are not above ${from}`);
  }
}

function asset(ext: 'js' | 'css', body: Uint8Array): ConsoleAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return {
    name: `console-${hash}.${ext}`,
    body,
    contentType: ext === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    gzipBytes: gzipSync(body, { level: 9 }).length,
  };
}

/** Builds the bundle (no cache): the script and the stylesheet. */
export async function buildConsoleBundle(root = packageRoot()): Promise<ConsoleBundle> {
  const src = join(root, 'src');
  const shim = (name: string) => join(src, 'console', 'shims', `${name}.ts`);
  // source modules (by absolute path, .ts) replaced by a shim in the browser build
  const swapped = new Map<string, string>([
    [join(src, 'protocol', 'ed25519.ts'), shim('ed25519')],
    [join(src, 'proof', 'verify', 'online.ts'), shim('offline')],
    [join(src, 'net', 'fetch.ts'), shim('offline')],
    [join(src, 'ledger', 'sha256.ts'), shim('sha256')],
  ]);
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [join(root, ENTRY)],
    absWorkingDir: root,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    write: false,
    outfile: join(root, 'console.js'), // not written (write: false): names the output
    logLevel: 'silent',
    define: { 'process.env.NODE_DEBUG': 'false', global: 'globalThis' },
    inject: [shim('buffer')], // Node's global Buffer, where the verifier's modules use it
    plugins: [
      {
        name: 'console-shims',
        setup(b) {
          b.onResolve({ filter: /^mcl-wasm$/ }, () => ({ path: shim('mcl-wasm') }));
          b.onResolve({ filter: /^zod$/ }, (a) => (a.importer === join(src, 'proof', 'bundle.ts') ? { path: shim('zod') } : undefined));
          b.onResolve({ filter: /^accumulate\.js$/ }, (a) => (a.importer.startsWith(src) ? { path: shim('accumulate') } : undefined));
          b.onResolve({ filter: /^\.\.?\/.*\.js$/ }, (a) => {
            const target = swapped.get(resolve(a.resolveDir, a.path).replace(/\.js$/, '.ts'));
            return target ? { path: target } : undefined;
          });
        },
      },
    ],
  });
  const script = result.outputFiles.find((f) => f.path.endsWith('.js'));
  if (!script) throw new Error('console bundle: esbuild wrote no script');
  const js = asset('js', script.contents);
  if (js.gzipBytes > CONSOLE_JS_GZIP_BUDGET) throw new Error(`console bundle: ${js.gzipBytes} bytes gzipped, over the ${CONSOLE_JS_GZIP_BUDGET} budget`);
  const css = readFileSync(join(src, 'console', 'browser', 'console.css'));
  return { script: js, style: asset('css', css) };
}

let cached: Promise<ConsoleBundle> | undefined;

/** The bundle, built once per process (a failed build is retried on the next call). */
export function consoleBundle(): Promise<ConsoleBundle> {
  cached ??= buildConsoleBundle().catch((err) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
