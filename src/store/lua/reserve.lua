-- One hold (ReserveRequest), batched (batch.ts): per call KEYS[ko + 1] is the user's base key,
-- KEYS[ko + 2] the outbox shard of the user. Answers status and what is available after it:
-- 1 held (or already held), 0 too little available, -1 no account loaded, -2 over the key's
-- requests a minute (then the ms to wait), -3 outbox full, -4 over the key's spend cap (then
-- what it used). A loaded account always has `bal` (PRIME sets it), so reading it also says
-- whether it exists. Only a key with a spend cap has its holds counted in `kheld`, which only
-- its cap check reads: two calls less per request for every other key. The price: when a cap is
-- set on a key, the holds it already had in flight do not count against it until they settle.
local id, amount, ttl, keyId, rpmLimit = ARGV[ao + 1], ARGV[ao + 2], ARGV[ao + 3], ARGV[ao + 4], ARGV[ao + 5]
-- spendLimit: -1 for none; spendField: the account field that sums the key's spend.
local spendLimit, spendField, outboxMax = tonumber(ARGV[ao + 6]), ARGV[ao + 7], tonumber(ARGV[ao + 8])
local base = KEYS[ko + 1]
bind(base)
sweep()
local held = redis.call('HGET', res, id)
if held then return 1, tonumber(redis.call('HGET', acct, 'bal') or '0') - tonumber(redis.call('GET', resv) or '0') end
if outboxMax > 0 and outboxLen(KEYS[ko + 2]) >= outboxMax then return -3, 0 end
local bal = redis.call('HGET', acct, 'bal')
if not bal then return -1, 0 end
local wait = rpmWait(base, keyId, tonumber(rpmLimit))
if wait then return -2, wait end
local need = tonumber(amount)
if spendLimit >= 0 then
  local used = tonumber(redis.call('HGET', acct, spendField) or '0') + tonumber(redis.call('HGET', kheld, keyId) or '0')
  if used + need > spendLimit then return -4, used end
end
local available = tonumber(bal) - tonumber(redis.call('GET', resv) or '0')
if need > available then return 0, available end
if spendLimit >= 0 and keyId ~= '' then
  redis.call('HSET', res, id, amount .. '|' .. keyId)
  redis.call('HINCRBY', kheld, keyId, amount)
else
  redis.call('HSET', res, id, amount)
end
redis.call('ZADD', resx, now + tonumber(ttl), id)
redis.call('INCRBY', resv, amount)
return 1, available - need
