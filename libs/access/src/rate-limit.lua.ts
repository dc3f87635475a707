export const KEYS_PER_CALL = 6;
export const ARGS_PER_CALL = 5;
export const RESULTS_PER_CALL = 4;

import { DAY_MS, MINUTE_MS } from './rate-limit-decision';
import { USAGE_HASH_TTL_MS } from './usage-counters';

/** What every call of a limiter shares, written into its script: ioredis encodes each argument of each call anew. */
export interface RateLimitConstants {
  /** Strikes before a ban. */
  banStrikes: number;
  banMs: number;
  /** A refusal at least this long after the period's first one is a strike. */
  graceMs: number;
}

/**
 * One atomic step per call of a batch, applied in order as separate calls would be.
 * KEYS per call: minute, day, ban flag, strikes, first refusal, usage hash. ARGV per call: minute
 * and day limits, key id ('' counts no usage), 'consume'|'peek', now (the ms to each UTC window's
 * reset follow from it). Reply per call: outcome (0 admitted, 1 refused, 2 banned, 3 banned now),
 * minute count, day count, ms (to reset or ban end). Refusals count in neither window; one at
 * least the grace after the period's first refusal is a strike.
 */
export const rateLimitLua = ({ banStrikes, banMs, graceMs }: RateLimitConstants): string => `
local function limit(k, a)
  local now = tonumber(ARGV[a + 5])
  local toMinute = ${MINUTE_MS} - now % ${MINUTE_MS}
  local toDay = ${DAY_MS} - now % ${DAY_MS}
  local banLeft = redis.call('PTTL', KEYS[k + 3])
  local m = tonumber(redis.call('GET', KEYS[k + 1]) or '0')
  local d = tonumber(redis.call('GET', KEYS[k + 2]) or '0')
  if banLeft > 0 then return 2, m, d, banLeft end
  if ARGV[a + 4] == 'peek' then return 0, m, d, 0 end
  if m < tonumber(ARGV[a + 1]) and d < tonumber(ARGV[a + 2]) then
    m = redis.call('INCR', KEYS[k + 1])
    if m == 1 then redis.call('PEXPIRE', KEYS[k + 1], toMinute + 1000) end
    d = redis.call('INCR', KEYS[k + 2])
    if d == 1 then redis.call('PEXPIRE', KEYS[k + 2], toDay + 1000) end
    return 0, m, d, 0
  end
  local refusedFor = toMinute
  if d >= tonumber(ARGV[a + 2]) then refusedFor = toDay end
  local refusedSince = redis.call('GET', KEYS[k + 5])
  if not refusedSince then
    redis.call('SET', KEYS[k + 5], ARGV[a + 5], 'PX', refusedFor)
  elseif now - tonumber(refusedSince) >= ${graceMs} then
    local strikes = redis.call('INCR', KEYS[k + 4])
    redis.call('PEXPIRE', KEYS[k + 4], refusedFor)
    if strikes >= ${banStrikes} then
      redis.call('SET', KEYS[k + 3], '1', 'PX', ${banMs})
      redis.call('DEL', KEYS[k + 4], KEYS[k + 5])
      return 3, m, d, ${banMs}
    end
  end
  return 1, m, d, refusedFor
end

local function count(k, a, outcome)
  local who = ARGV[a + 3]
  if who == '' or ARGV[a + 4] == 'peek' then return end
  local field = ':r'
  if outcome == 0 then field = ':a' end
  if redis.call('HINCRBY', KEYS[k + 6], who .. field, 1) == 1 then
    redis.call('PEXPIRE', KEYS[k + 6], ${USAGE_HASH_TTL_MS})
  end
  if outcome == 3 then redis.call('HINCRBY', KEYS[k + 6], who .. ':b', 1) end
end

local out = {}
for i = 0, #KEYS / ${KEYS_PER_CALL} - 1 do
  local outcome, m, d, ms = limit(i * ${KEYS_PER_CALL}, i * ${ARGS_PER_CALL})
  count(i * ${KEYS_PER_CALL}, i * ${ARGS_PER_CALL}, outcome)
  local o = i * ${RESULTS_PER_CALL}
  out[o + 1] = outcome
  out[o + 2] = m
  out[o + 3] = d
  out[o + 4] = ms
end
return out
`;
