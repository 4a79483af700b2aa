/**
 * The sign-up portal: one self-contained HTML page (no build step). A person names an organization and gets its
 * first API key, shown once, then can try it against the API from the page. The key is kept only in the page's
 * memory: never in storage, never in the URL.
 */
export function portalPage(opts: { identityQuota: number; creditGrant: string; signupOpen: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Proof gateway — sign up</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; color: #1b1f24; }
  h1 { font-size: 1.6rem; margin-bottom: .25rem; }
  .muted { color: #57606a; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=text] { width: 100%; padding: .5rem; font: inherit; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .5rem 1rem; font: inherit; cursor: pointer; }
  .key { font: 14px/1.4 ui-monospace, monospace; background: #f6f8fa; border: 1px solid #d0d7de; padding: .75rem; word-break: break-all; }
  .warn { background: #fff8c5; border: 1px solid #d4a72c; padding: .75rem; margin: 1rem 0; }
  .error { color: #cf222e; }
  pre { background: #f6f8fa; padding: .75rem; overflow: auto; font-size: 13px; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<main>
  <h1>Proof gateway</h1>
  <p class="muted">Create an organization and its first API key. New organizations get the sandbox grant:
    <span id="grant">${opts.identityQuota} identities and ${opts.creditGrant} ledger credits</span>; more on operator approval.</p>

  <p id="closed" class="warn"${opts.signupOpen ? ' hidden' : ''}>Self-service sign-up is turned off on this gateway: ask its operator for an organization.</p>
  <form id="signup" novalidate${opts.signupOpen ? '' : ' hidden'}>
    <label for="org-name">Organization name</label>
    <input id="org-name" name="organization_name" type="text" required minlength="2" maxlength="100" autocomplete="organization">
    <button id="create" type="submit">Create organization and API key</button>
    <p id="error" class="error" role="alert" hidden></p>
  </form>

  <section id="result" hidden>
    <h2>Your API key</h2>
    <div class="warn" id="warning">This key is shown <strong>only once</strong>. Copy it now and keep it secret; the gateway stores only its hash.</div>
    <div class="key" id="api-key" data-testid="api-key"></div>
    <button id="copy" type="button">Copy</button>
    <button id="try" type="button">Try it: list my keys</button>
    <button id="done" type="button">I have stored it — hide the key</button>
    <p class="muted">Organization <code id="org-id"></code> · key prefix <code id="key-prefix"></code></p>
    <pre id="try-output" hidden></pre>
    <p class="muted">Call the API with the header <code>X-API-Key</code>. Reference: <a href="/reference">/reference</a> · OpenAPI: <a href="/docs/json">/docs/json</a></p>
  </section>
</main>
<script>
(() => {
  let key = null; // only in memory
  const $ = (id) => document.getElementById(id);
  const form = $('signup');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    $('error').hidden = true;
    const name = $('org-name').value.trim();
    if (name.length < 2) { $('error').textContent = 'Enter an organization name (at least 2 characters).'; $('error').hidden = false; return; }
    const body = { organization_name: name };
    $('create').disabled = true;
    try {
      const res = await fetch('/portal/signup', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const data = await res.json();
      if (!res.ok) throw new Error(data.error || ('HTTP ' + res.status));
      key = data.api_key.key;
      $('api-key').textContent = key;
      $('org-id').textContent = data.organization.id;
      $('key-prefix').textContent = data.api_key.prefix;
      form.hidden = true;
      $('result').hidden = false;
    } catch (err) {
      $('error').textContent = 'Sign-up failed: ' + err.message;
      $('error').hidden = false;
    } finally {
      $('create').disabled = false;
    }
  });
  $('copy').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(key); $('copy').textContent = 'Copied'; } catch { $('copy').textContent = 'Select the key and copy it'; }
  });
  $('try').addEventListener('click', async () => {
    const res = await fetch('/v1/admin/api-keys', { headers: { 'X-API-Key': key } });
    const text = await res.text();
    $('try-output').textContent = 'GET /v1/admin/api-keys → ' + res.status + '\\n' + text;
    $('try-output').hidden = false;
  });
  $('done').addEventListener('click', () => {
    key = null;
    $('api-key').textContent = '(hidden — it cannot be shown again)';
    $('copy').disabled = true;
    $('try').disabled = true;
  });
})();
</script>
</body>
</html>`;
}
