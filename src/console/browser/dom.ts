/** Tiny DOM helpers for the console: elements from tag + attributes + children, and value formatting. */

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | EventListener | undefined | null>;

/** An element: attributes (on* are listeners, booleans toggle, null/undefined/false are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** A time as the reader's locale shows it, with the ISO value in the title; '—' for none. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  const t = h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
  return t;
}

/** A status badge: its class follows the value (completed/active green, failed red, others neutral). */
export function badge(value: string): HTMLElement {
  const tone = /^(active|completed|complete|succeeded|executed|delivered|pass)$/.test(value)
    ? 'ok'
    : /^(failed|expired|rejected|retired|fail)$/.test(value)
      ? 'bad'
      : 'wait';
  return h('span', { class: `badge ${tone}`, 'data-status': value }, value);
}

/** A long value (hash, address, URL) in monospace that wraps. */
export function mono(value: string | null | undefined): HTMLElement | string {
  return value ? h('code', { class: 'mono' }, value) : '—';
}

/** A definition list from label/value pairs. */
export function facts(rows: [string, Child][]): HTMLElement {
  return h('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** A button that copies `value` to the clipboard and says so (for the screen reader too). */
export function copyButton(value: string, label: string): HTMLElement {
  const status = h('span', { class: 'sr-status', role: 'status' });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'copy',
      'aria-label': `Copy ${label}`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(value);
          status.textContent = 'Copied';
        } catch {
          status.textContent = 'Copy refused by the browser: select the text instead';
        }
      },
    },
    'Copy',
  );
  return h('span', { class: 'copy-wrap' }, button, status);
}

export const hexOf = (bytes: ArrayBuffer | Uint8Array): string =>
  Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

export function bytesOfHex(hex: string): Uint8Array {
  const clean = hex.trim().replace(/^0x/i, '');
  if (!/^([0-9a-f]{2})*$/i.test(clean)) throw new Error('not a hex string');
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}
