/**
 * The console's HTML page and its policy: a shell that loads the bundled stylesheet and script from this origin
 * (src/console/bundle.ts names them by content hash). No inline script or style.
 */
import type { ConsoleBundle } from './bundle.js';

export const CONSOLE_ASSET_PREFIX = '/console/assets/';

/** Scripts, styles, data requests and images from this origin only; nothing inline. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function consolePage(bundle: ConsoleBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Proof gateway console</title>
<link rel="stylesheet" href="${CONSOLE_ASSET_PREFIX}${bundle.style.name}">
<script type="module" src="${CONSOLE_ASSET_PREFIX}${bundle.script.name}"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`;
}
