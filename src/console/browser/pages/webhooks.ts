/** Webhooks: the endpoints, their recent deliveries with the attempts made, and redelivery of one. */
import { api, ApiFailure, type Json } from '../api.js';
import { badge, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';

/** redelivery outcomes by delivery id (kept across redraws) */
const redelivered = new Map<string, string>();
/** the attempt logs the reader opened, by delivery id (read once per opening, kept across redraws) */
const opened = new Map<string, Json[] | string>();

function attemptList(log: Json[] | string | undefined): HTMLElement {
  if (log === undefined) return h('p', { class: 'muted' }, 'Loading…');
  if (typeof log === 'string') return h('p', { class: 'error' }, log);
  if (!log.length) return h('p', { class: 'muted' }, 'No attempt yet.');
  return h(
    'ol',
    { class: 'attempts' },
    log.map((a) =>
      h(
        'li',
        { 'data-attempt': a.attempt },
        `#${a.attempt} `,
        badge(a.succeeded ? 'succeeded' : 'failed'),
        ` ${a.status_code ?? 'no answer'} in ${a.duration_ms} ms, `,
        time(a.at),
        a.error ? h('span', { class: 'error' }, ` ${a.error}`) : '',
      ),
    ),
  );
}

/** A disclosure with the delivery's attempts (GET /v1/webhooks/deliveries/{id}), read when opened. */
function attempts(d: Json): HTMLElement {
  const box = h('div', {}, opened.has(d.id) ? attemptList(opened.get(d.id)) : '');
  const details = h('details', { open: opened.has(d.id) }, h('summary', {}, `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`), box);
  details.addEventListener('toggle', async () => {
    if (!details.open) {
      opened.delete(d.id);
      return;
    }
    if (opened.has(d.id)) return; // redrawn open: already read
    box.replaceChildren(attemptList(undefined));
    try {
      opened.set(d.id, (await api('GET', `/v1/webhooks/deliveries/${d.id}`)).attempt_log);
    } catch (err) {
      opened.set(d.id, `Could not read the attempts: ${err instanceof ApiFailure ? err.message : String(err)}`);
    }
    box.replaceChildren(attemptList(opened.get(d.id)));
  });
  return details;
}

async function redeliver(id: string, refresh: () => void): Promise<void> {
  try {
    const r = await api('POST', `/v1/webhooks/deliveries/${id}/redeliver`);
    redelivered.set(id, `Redelivery ${r.status}`);
  } catch (err) {
    redelivered.set(id, `Redelivery refused: ${err instanceof ApiFailure ? err.message : String(err)}`);
  }
  const el = document.getElementById(`redeliver-${id}`);
  if (el) el.textContent = redelivered.get(id)!;
  refresh();
}

function deliveryRow(d: Json, refresh: () => void): HTMLElement {
  return h(
    'tr',
    { 'data-delivery': d.id },
    h('td', {}, d.event_type),
    h('td', {}, badge(d.status)),
    h('td', {}, attempts(d), d.last_status_code ? ` last ${d.last_status_code}` : '', d.last_error ? h('span', { class: 'muted' }, ` ${d.last_error}`) : ''),
    h('td', {}, time(d.created_at)),
    h(
      'td',
      {},
      h(
        'button',
        { type: 'button', class: 'redeliver', 'aria-label': `Redeliver ${d.event_type} ${d.id}`, onclick: () => redeliver(d.id, refresh) },
        'Redeliver',
      ),
      h('span', { id: `redeliver-${d.id}`, role: 'status' }, redelivered.get(d.id) ?? ''),
    ),
  );
}

function endpointCard(e: Json, deliveries: Json[], refresh: () => void): HTMLElement {
  const mine = deliveries.filter((d) => d.endpoint_id === e.id);
  return h(
    'article',
    { class: 'card', 'data-endpoint': e.id },
    h('h2', {}, mono(e.url), ' ', badge(e.is_active ? 'active' : 'disabled')),
    facts([
      ['Events', e.event_types?.join(', ') ?? 'all'],
      ['Verified', time(e.verified_at)],
      ['Last success', time(e.last_success_at)],
      ['Consecutive failures', String(e.consecutive_failures)],
      ...(e.disabled_reason ? ([['Disabled', e.disabled_reason]] as [string, string][]) : []),
    ]),
    h('h3', {}, 'Recent deliveries'),
    mine.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            {},
            h('caption', { class: 'sr-only' }, `Deliveries to ${e.url}`),
            h('thead', {}, h('tr', {}, ...['Event', 'Status', 'Attempts', 'Created', 'Action'].map((c) => h('th', { scope: 'col' }, c)))),
            h(
              'tbody',
              {},
              mine.map((d) => deliveryRow(d, refresh)),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No delivery yet.'),
  );
}

export const webhooksPage: Page = {
  title: 'Webhooks',
  load: async () => {
    const [e, d] = await Promise.all([api('GET', '/v1/webhooks/endpoints?limit=100'), api('GET', '/v1/webhooks/deliveries?limit=100')]);
    return { endpoints: e.endpoints, deliveries: d.deliveries };
  },
  view: (data: Json, refresh) =>
    h(
      'section',
      { 'aria-labelledby': 'page-title' },
      h('h1', { id: 'page-title' }, 'Webhooks'),
      data.endpoints.length
        ? data.endpoints.map((e: Json) => endpointCard(e, data.deliveries, refresh))
        : h('p', {}, 'No endpoint: register one with POST /v1/webhooks/endpoints.'),
    ),
};
