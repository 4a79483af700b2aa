/**
 * The system of record (drizzle, Postgres dialect; the same schema runs on PGlite), one file per aggregate under
 * ./schema/. Migrations in ./migrations are generated from this file with `npm run db:generate`.
 */
export * from './schema/platform.js';
export * from './schema/identities.js';
export * from './schema/intents.js';
export * from './schema/events.js';
export * from './schema/governance.js';
export * from './schema/provider.js';
