/**
 * Checks and counts both windows, strikes and bans in one atomic step (one round trip).
 * KEYS: 1 minute counter, 2 day counter, 3 ban flag, 4 strike counter, 5 first refusal (its time)
 * ARGV: 1 minute limit, 2 day limit, 3 ms to minute reset, 4 ms to day reset,
 *       5 strikes before a ban, 6 ban ms, 7 'consume' | 'peek', 8 now (ms), 9 strike grace ms
 * Returns {outcome, minuteCount, dayCount, ms}: outcome 0 admitted (or peeked), 1 refused
 * (ms = until the refusing window resets), 2 banned (ms = ban left), 3 banned by this request.
 * A refused request counts in neither window. A request refused at least `strike grace` after
 * the first refusal of the same refusal period is a strike: the client has had time to see a
 * 429 and ignored it. (Requests of one parallel burst arrive before any 429 could be read.)
 */
export const RATE_LIMIT_LUA = `
local banLeft = redis.call('PTTL', KEYS[3])
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if banLeft > 0 then return {2, m, d, banLeft} end
if ARGV[7] == 'peek' then return {0, m, d, 0} end
local ml = tonumber(ARGV[1])
local dl = tonumber(ARGV[2])
if m < ml and d < dl then
  m = redis.call('INCR', KEYS[1])
  if m == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 1000) end
  d = redis.call('INCR', KEYS[2])
  if d == 1 then redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]) + 1000) end
  return {0, m, d, 0}
end
local refusedFor = tonumber(ARGV[3])
if d >= dl then refusedFor = tonumber(ARGV[4]) end
local refusedSince = redis.call('GET', KEYS[5])
if not refusedSince then
  redis.call('SET', KEYS[5], ARGV[8], 'PX', refusedFor)
elseif tonumber(ARGV[8]) - tonumber(refusedSince) >= tonumber(ARGV[9]) then
  local strikes = redis.call('INCR', KEYS[4])
  redis.call('PEXPIRE', KEYS[4], refusedFor)
  if strikes >= tonumber(ARGV[5]) then
    redis.call('SET', KEYS[3], '1', 'PX', tonumber(ARGV[6]))
    redis.call('DEL', KEYS[4], KEYS[5])
    return {3, m, d, tonumber(ARGV[6])}
  end
end
return {1, m, d, refusedFor}
`;
