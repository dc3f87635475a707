import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import type { FeedOrder } from '@app/database';
import { IsOptional } from '@app/errors';
import type { Response } from 'express';

export const MAX_PAGE_SIZE = 100;

/** The OpenAPI description of the Link header of a paged answer. */
export const LINK_HEADER = {
  Link: { description: 'The next page: `<...>; rel="next"`', schema: { type: 'string' } },
};
const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A decimal integer query parameter; anything else (`0x10`, `1e3`, ` 7`) becomes NaN so validation names it. */
export const IntParam = () =>
  Transform(({ value }) =>
    typeof value === 'string' ? (/^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : NaN) : value,
  );

/** The page size of every list. */
export class PageLimit {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = 20;
}

/** Keyset pagination over integer ids, shared by every such list; filters extend this class. */
export class PageQuery extends PageLimit {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: 'The last id of the previous page; the next page starts after it',
  })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  after?: number;
}

const FEED_ORDERS: FeedOrder[] = ['oldest', 'newest'];

/** The `order` of a feed (events, messages, deliveries): `newest` pages backwards from the latest. */
export class FeedOrderQuery {
  @ApiPropertyOptional({
    enum: FEED_ORDERS,
    default: 'oldest',
    description: '`newest` lists the latest first (what a dashboard wants); `after` then continues towards older ones',
  })
  @IsOptional()
  @IsIn(FEED_ORDERS)
  order?: FeedOrder;
}

/** An integer-id feed page that can be read from either end. */
export class FeedQuery extends IntersectionType(PageQuery, FeedOrderQuery) {}

/** `ids=1,2,3` to a number array; anything malformed or above 2^53-1 (which Number would round) becomes NaN so validation names it. */
export const CommaSeparatedIds = () =>
  Transform(({ value }) =>
    typeof value === 'string'
      ? value.split(',').map((s) => (/^[1-9][0-9]{0,15}$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : NaN))
      : value,
  );

/** `true`/`false` to a boolean; anything else is left for @IsBoolean to refuse. */
export const BooleanParam = () =>
  Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/**
 * Cuts the `limit + 1` rows a list query read down to one page and, when there is more,
 * announces the next page in `Link: <path?filters&after=last>; rel="next"` with the same
 * filters and limit, so a client can follow links without rebuilding queries.
 */
export function page<T>(
  res: Response,
  path: string,
  query: PageLimit & { after?: number | string },
  rows: T[],
  cursorOf: (row: T) => number | string = (row) => (row as { id: number | string }).id,
): T[] {
  if (rows.length <= query.limit) return rows;
  const items = rows.slice(0, query.limit);
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || key === 'after') continue;
    params.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  params.set('after', String(cursorOf(items[items.length - 1])));
  res.setHeader('Link', `<${path}?${params.toString().replaceAll('%2C', ',')}>; rel="next"`);
  return items;
}
