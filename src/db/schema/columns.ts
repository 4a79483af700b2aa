/** Column builders every table shares. */
import { timestamp } from 'drizzle-orm/pg-core';

/**
 * Millisecond precision, as a JS Date and the API's ISO strings carry it: list cursors are (created_at, id) taken
 * from a row, so a microsecond created_at would make the next page's `created_at < cursor` skip rows of the same
 * millisecond.
 */
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date', precision: 3 }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
