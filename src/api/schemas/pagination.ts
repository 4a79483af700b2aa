/**
 * The OpenAPI pieces of paged lists (src/api/pagination.ts reads the query and builds the objects). Every list takes
 * `limit`, `cursor` and `offset` (pageQuery) and answers `pagination` (PaginationSchema) beside its named array
 * (docs/api-conventions.md, "Lists").
 */
import { z } from '@hono/zod-openapi';

/** Rows on a page when `limit` is not given (the pending list's default is the contract's 100). */
export const DEFAULT_PAGE_SIZE = 50;

/** The most rows a page holds. */
export const MAX_PAGE_SIZE = 100;

/** The `pagination` object of every list. */
export const PaginationSchema = z
  .object({
    limit: z.number().int().openapi({ description: 'The page size asked for (or the default)' }),
    offset: z.number().int().nullable().openapi({
      description: 'Position of the first item of the page when it was asked by offset (0 for the first page); null when asked by cursor',
    }),
    total: z.number().int().openapi({ description: 'Every item the filters match, not only this page' }),
    has_more: z.boolean().openapi({ description: 'Whether items follow this page' }),
    next_cursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `cursor` for the next page; set whenever has_more is true (also after a page asked by offset)' }),
  })
  .openapi('Pagination');

/**
 * The `limit`, `cursor` and `offset` query parameters, to spread into a list's query object. `cursor` and `offset`
 * together are refused (pageRequest in src/api/pagination.ts).
 */
export function pageQuery(defaultLimit = DEFAULT_PAGE_SIZE) {
  return {
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_SIZE)
      .optional()
      .openapi({ description: `Page size, 1 to ${MAX_PAGE_SIZE}, default ${defaultLimit}` }),
    cursor: z.string().max(500).optional().openapi({ description: 'The `next_cursor` of the previous page (opaque). Not with `offset`' }),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .openapi({ description: 'Items to skip; past the end the page is empty with has_more false. Not with `cursor`' }),
  };
}
