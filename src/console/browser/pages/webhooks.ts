/** Webhooks: the endpoints, their recent deliveries with the attempts made, and redelivery of one. */
import { api, ApiFailure, type Json } from '../api.js';
import { badge, facts, h, mono, time } from '../dom.js';
import type { Page } from '../page.js';

/** redelivery outcomes by delivery id (kept across redraws) */
const redelivered = new Map<string, string>();

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
    h(
      'td',
      {},
      String(d.attempts),
      d.last_status_code ? ` (last ${d.last_status_code})` : '',
      d.last_error ? h('span', { class: 'muted' }, ` ${d.last_error}`) : '',
    ),
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
