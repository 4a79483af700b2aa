/**
 * The parameters of a failed database query never leave the process in an error text (a log line, an API error
 * field, a Temporal failure, a stored error). What carries them:
 *  - drizzle's DrizzleQueryError: `query`, `params`, and a message `Failed query: <sql>\nparams: <every value>`;
 *  - PGlite's error: `query` and `params` too;
 *  - a PostgreSQL error (pg and PGlite): `detail` quotes row values ("Key (x)=(…) already exists", "Failing row
 *    contains (…)"), `where` can quote a statement with its values, and an input error's message ends with the
 *    input (`invalid input syntax for type uuid: "…"`).
 * The rule: keep the SQL text, the SQLSTATE code and the names (table, column, constraint); drop the parameters;
 * mask `detail`, `where` and the quoted value that ends a driver's message.
 */

const REDACTED = '[redacted]';
/** `Failed query: …\nparams: …` up to the end of the text (the parameters are the message's last part). */
const PARAMS_TAIL = /(Failed query: [\s\S]*?)\nparams: [\s\S]*$/;
/** A quoted value ending a PostgreSQL message (`…: "value"`). */
const QUOTED_INPUT = /: "[\s\S]*"$/;

type QueryError = Error & { query: string; params: unknown };
type DriverError = Error & { code: string; detail?: unknown; where?: unknown; params?: unknown };

/** drizzle's DrizzleQueryError (and anything shaped like it): the SQL and its parameters. */
function isQueryError(e: Error): e is QueryError {
  return typeof (e as { query?: unknown }).query === 'string' && 'params' in e && e.message.startsWith('Failed query: ');
}

/** A PostgreSQL error from pg or PGlite: a five-character SQLSTATE and a severity. */
function isDriverError(e: Error): e is DriverError {
  const x = e as { code?: unknown; severity?: unknown };
  return typeof x.code === 'string' && /^[0-9A-Z]{5}$/.test(x.code) && typeof x.severity === 'string';
}

/** Any text with a drizzle query error's parameters cut off (a backstop for messages already copied into strings). */
export function redactQueryText(text: string): string {
  return text.includes('Failed query: ') ? text.replace(PARAMS_TAIL, `$1\nparams: ${REDACTED}`) : text;
}

/** A driver error's message without a quoted input value at its end, with its SQLSTATE. */
function driverMessage(e: DriverError): string {
  return `${e.message.replace(QUOTED_INPUT, `: ${REDACTED}`)} (SQLSTATE ${e.code})`;
}

/**
 * The message of an error with no query parameter in it: a query error becomes `Failed query: <sql>` followed by
 * the database's own reason and code when the cause is a driver error.
 */
export function safeErrorMessage(e: Error): string {
  if (isQueryError(e)) {
    const cause = e.cause instanceof Error ? e.cause : undefined;
    const reason = cause ? (isDriverError(cause) ? driverMessage(cause) : redactQueryText(cause.message)) : undefined;
    return `Failed query: ${e.query}${reason ? `\ncause: ${reason}` : ''}`;
  }
  if (isDriverError(e)) return driverMessage(e);
  return redactQueryText(e.message);
}

/**
 * Rewrites one error in place by the rule above (message, stack, and the `params`, `detail`, `where` fields), for
 * errors that are serialized whole (a Temporal activity failure keeps the message and stack of the error and its
 * causes). Returns whether the error was changed.
 */
export function scrubQueryError(e: Error): boolean {
  const query = isQueryError(e);
  const driver = isDriverError(e);
  if (!query && !driver && !('params' in e) && !e.message.includes('Failed query: ')) return false;
  const before = e.message;
  const after = query ? `Failed query: ${(e as QueryError).query}` : driver ? e.message.replace(QUOTED_INPUT, `: ${REDACTED}`) : redactQueryText(before);
  e.message = after;
  if (typeof e.stack === 'string') e.stack = redactQueryText(e.stack.replace(before, () => after));
  const x = e as unknown as Record<string, unknown>;
  if ('params' in x) x.params = REDACTED;
  if (driver) {
    if (x.detail !== undefined) x.detail = REDACTED;
    if (x.where !== undefined) x.where = REDACTED;
    if (x.internalQuery !== undefined) x.internalQuery = REDACTED;
  }
  return true;
}
