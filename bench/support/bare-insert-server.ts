/**
 * The baseline of bench/api-throughput.ts: a bare Hono app on @hono/node-server doing the least a request can do
 * against Postgres — one insert (POST /insert, the JSON body stored) or one select (GET /row/:id). Same runtime,
 * same driver and pool size as the gateway, no auth, no validation, no workflow.
 */
import { randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL!, max: 10 });
await pool.query('create table if not exists bench_bare (id uuid primary key, body jsonb not null, created_at timestamptz not null default now())');

const app = new Hono();
app.post('/insert', async (c) => {
  const body = await c.req.json();
  const id = randomUUID();
  await pool.query('insert into bench_bare (id, body) values ($1, $2)', [id, JSON.stringify(body)]);
  return c.json({ id }, 201);
});
app.get('/row/:id', async (c) => {
  const {
    rows: [row],
  } = await pool.query('select id, body, created_at from bench_bare where id = $1', [c.req.param('id')]);
  return row ? c.json(row) : c.json({ error: 'not found' }, 404);
});

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.BARE_PORT) }, () => console.log('bare listening'));
