-- The clock; `bind(base)`, which names the keys of the user whose base key (redis-layout.ts)
-- the current call brings: acct, res, resx, resv, kheld; and `sweep()`, which releases that
-- user's expired holds. A call brings one base key rather than the five names: fewer and
-- shorter arguments for the gateway to write and for Redis to read. The clock is read once per
-- script call, so a batch sweeps each user once: holds made or settled later in the same call
-- expire after `now`, so a second sweep would find nothing.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local acct, res, resx, resv, kheld, done
local bound
local function bind(base)
  if base == bound then return end
  bound = base
  acct, res, resx, resv, kheld, done = base .. ':acct', base .. ':res', base .. ':resx', base .. ':resv', base .. ':kheld', base .. ':settled:'
end
-- "settled" is the marker that earlier versions left in `res`; the sweep clears the last ones.
local function release(a)
  if a and a ~= 'settled' then
    local sep = string.find(a, '|', 1, true)
    local amount = sep and string.sub(a, 1, sep - 1) or a
    redis.call('DECRBY', resv, amount)
    if sep and sep < #a then redis.call('HINCRBY', kheld, string.sub(a, sep + 1), neg(amount)) end
  end
end
local swept = {}
local function sweep()
  if swept[resx] then return end
  swept[resx] = true
  local expired = redis.call('ZRANGEBYSCORE', resx, '-inf', now)
  if #expired == 0 then return end
  for _, id in ipairs(expired) do
    release(redis.call('HGET', res, id))
    redis.call('HDEL', res, id)
  end
  redis.call('ZREMRANGEBYSCORE', resx, '-inf', now)
end
