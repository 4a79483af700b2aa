/**
 * The interactive API reference (/reference, and /docs for a browser) served entirely from this origin: the page,
 * the @scalar/api-reference standalone browser bundle read from node_modules (its version pinned by package.json and
 * the lock file) and a small start-up script. Nothing is fetched from another host, so the page works offline and
 * no third-party script can change under us. A Content-Security-Policy limits the page to this origin.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The package's single-file (UMD) browser build: it defines window.Scalar and loads no further chunks. */
function locateBundle(): { path: string; version: string } {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference'); // <pkg>/dist/index.js
  const root = dirname(dirname(entry));
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { path: join(root, 'dist', 'browser', 'standalone.js'), version };
}

// Starts the reference on the page's #app element with the document named by its data-url attribute. Default
// fonts are off (they would be loaded from Scalar's font host), and so is the "Ask AI" agent (a Scalar service).
const INIT_SCRIPT = `(function () {
  var app = document.getElementById('app');
  Scalar.createApiReference(app, { url: app.dataset.url, withDefaultFonts: false, agent: { disabled: true } });
})();
`;

const bundle = locateBundle();
const initHash = createHash('sha256').update(INIT_SCRIPT).digest('hex').slice(0, 12);

/** The asset file names; each name changes with its content (package version or script hash), so they never go stale. */
export const REFERENCE_ASSETS = {
  bundle: `scalar-api-reference-${bundle.version}.js`,
  init: `reference-init-${initHash}.js`,
} as const;

export const REFERENCE_ASSET_PREFIX = '/reference/assets/';

let bundleBody: Buffer | undefined;

/** The body of a reference asset by file name, or undefined for any other name. The bundle is read once, on first use. */
export function referenceAsset(name: string): Buffer | string | undefined {
  if (name === REFERENCE_ASSETS.init) return INIT_SCRIPT;
  if (name !== REFERENCE_ASSETS.bundle) return undefined;
  bundleBody ??= readFileSync(bundle.path);
  return bundleBody;
}

/** Headers of an asset: JavaScript, cacheable for a year (the name is versioned). */
export const REFERENCE_ASSET_HEADERS = {
  'Content-Type': 'text/javascript; charset=utf-8',
  'Cache-Control': 'public, max-age=31536000, immutable',
  'X-Content-Type-Options': 'nosniff',
} as const;

/**
 * The page's policy: scripts, data requests, images and fonts from this origin only. Styles also allow inline ones:
 * the bundle injects its stylesheet as <style> elements and sets style attributes at run time.
 */
export const REFERENCE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The reference page for the OpenAPI document at documentUrl (a same-origin path). */
export function referencePage(documentUrl: string, title: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeAttr(title)}</title>
  </head>
  <body>
    <div id="app" data-url="${escapeAttr(documentUrl)}"></div>
    <script src="${REFERENCE_ASSET_PREFIX}${REFERENCE_ASSETS.bundle}"></script>
    <script src="${REFERENCE_ASSET_PREFIX}${REFERENCE_ASSETS.init}"></script>
  </body>
</html>
`;
}
