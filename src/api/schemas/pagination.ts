/** The OpenAPI pieces of paged lists (src/api/pagination.ts builds the objects). */
import { z } from '@hono/zod-openapi';

/** `pagination` of a keyset list: pass `next_cursor` back as `cursor`. */
export const CursorPaginationSchema = z.object({ limit: z.number().int(), has_more: z.boolean(), next_cursor: z.string().nullable() });

/** `pagination` of an offset list. */
export const OffsetPaginationSchema = z.object({ limit: z.number().int(), offset: z.number().int(), total: z.number().int(), has_more: z.boolean() });

/** The `cursor` query parameter of a keyset list. */
export const CursorParam = z.string().max(500).optional();

/** Rows on a keyset list's page when `limit` is not given. */
export const DEFAULT_PAGE_SIZE = 50;

/** The `limit` query parameter of a keyset list. */
export const PageSizeParam = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .optional()
  .openapi({ description: `Page size, default ${DEFAULT_PAGE_SIZE}, at most 200` });
