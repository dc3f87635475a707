/** Keys and arguments of one limiter call inside a batch (PlanRateLimiter sends them in this order). */
const KEYS_PER_CALL = 6;
const ARGS_PER_CALL = 10;
/** Numbers each call answers with, one after the other in the script's flat reply. */
export const RESULTS_PER_CALL = 4;

import { USAGE_HASH_TTL_MS } from './usage-counters';

/**
 * Checks and counts both windows, strikes and bans in one atomic step, for a batch of calls
 * (one script call per account and event-loop turn; see PlanRateLimiter). Calls are applied
 * in order, exactly as the same number of separate script calls would be.
 * Per call, KEYS: 1 minute counter, 2 day counter, 3 ban flag, 4 strike counter, 5 first refusal (its time),
 *       6 the minute's usage hash (usage-counters.ts)
 * ARGV: 1 minute limit, 2 day limit, 3 ms to minute reset, 4 ms to day reset,
 *       5 strikes before a ban, 6 ban ms, 7 'consume' | 'peek', 8 now (ms), 9 strike grace ms,
 *       10 the key id whose usage this call counts ('' counts none: client addresses)
 * Answers {outcome, minuteCount, dayCount, ms} per call: outcome 0 admitted (or peeked), 1 refused
 * (ms = until the refusing window resets), 2 banned (ms = ban left), 3 banned by this request.
 * A refused request counts in neither window. A request refused at least `strike grace` after
 * the first refusal of the same refusal period is a strike: the client has had time to see a
 * 429 and ignored it. (Requests of one parallel burst arrive before any 429 could be read.)
 */
export const RATE_LIMIT_LUA = `
local function limit(k, a)
  local banLeft = redis.call('PTTL', KEYS[k + 3])
  local m = tonumber(redis.call('GET', KEYS[k + 1]) or '0')
  local d = tonumber(redis.call('GET', KEYS[k + 2]) or '0')
  if banLeft > 0 then return 2, m, d, banLeft end
  if ARGV[a + 7] == 'peek' then return 0, m, d, 0 end
  if m < tonumber(ARGV[a + 1]) and d < tonumber(ARGV[a + 2]) then
    m = redis.call('INCR', KEYS[k + 1])
    if m == 1 then redis.call('PEXPIRE', KEYS[k + 1], tonumber(ARGV[a + 3]) + 1000) end
    d = redis.call('INCR', KEYS[k + 2])
    if d == 1 then redis.call('PEXPIRE', KEYS[k + 2], tonumber(ARGV[a + 4]) + 1000) end
    return 0, m, d, 0
  end
  local refusedFor = tonumber(ARGV[a + 3])
  if d >= tonumber(ARGV[a + 2]) then refusedFor = tonumber(ARGV[a + 4]) end
  local refusedSince = redis.call('GET', KEYS[k + 5])
  if not refusedSince then
    redis.call('SET', KEYS[k + 5], ARGV[a + 8], 'PX', refusedFor)
  elseif tonumber(ARGV[a + 8]) - tonumber(refusedSince) >= tonumber(ARGV[a + 9]) then
    local strikes = redis.call('INCR', KEYS[k + 4])
    redis.call('PEXPIRE', KEYS[k + 4], refusedFor)
    if strikes >= tonumber(ARGV[a + 5]) then
      redis.call('SET', KEYS[k + 3], '1', 'PX', tonumber(ARGV[a + 6]))
      redis.call('DEL', KEYS[k + 4], KEYS[k + 5])
      return 3, m, d, tonumber(ARGV[a + 6])
    end
  end
  return 1, m, d, refusedFor
end

local function count(k, a, outcome)
  local who = ARGV[a + 10]
  if who == '' or ARGV[a + 7] == 'peek' then return end
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
