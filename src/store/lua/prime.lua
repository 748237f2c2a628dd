-- One account's load (PrimeSnapshot), batched (batch.ts): per call KEYS[ko + 1..6] are the
-- user's acct, fixed, late, resv, credits and limits; ARGV[ao + 1..6] the balance, the charged
-- total, a fresh generation, the caps' spend as `field\nvalue\n...` (one argument, so every call
-- has the same shape; field names and integers hold no newline), the count of credits the
-- balance holds and the count of cap changes the spend holds. A snapshot older than the last cap
-- change (`limits`, forget.lua) is refused: false, 'stale'. `late` holds charges acknowledged
-- while no account was loaded; those committed after the snapshot (charged after > the
-- snapshot's total) are not in it, and are taken now. So are the credits numbered past the
-- snapshot's count (credit.lua). Answers the balance loaded and the total held, or false, false
-- when an account was loaded already.
local acctKey, fixed, late, resvKey, credits, limits = KEYS[ko + 1], KEYS[ko + 2], KEYS[ko + 3], KEYS[ko + 4], KEYS[ko + 5], KEYS[ko + 6]
local balance, charged, generation, spend, creditSeq, limitsSeq = ARGV[ao + 1], ARGV[ao + 2], ARGV[ao + 3], ARGV[ao + 4], ARGV[ao + 5], ARGV[ao + 6]
if redis.call('EXISTS', acctKey) == 1 then return false, false end
if tonumber(redis.call('GET', limits) or '0') > tonumber(limitsSeq) then return false, 'stale' end
redis.call('HSET', acctKey, 'bal', balance, 'cbase', charged, 'gen', generation, 'cseq', creditSeq)
local field
for part in string.gmatch(spend, '[^\n]+') do
  if field then
    redis.call('HSET', acctKey, field, part)
    field = nil
  else
    field = part
  end
end
local lateCharges = redis.call('HGETALL', late)
for i = 1, #lateCharges, 2 do
  local v = lateCharges[i + 1]
  local a = string.find(v, '|', 1, true)
  local b = string.find(v, '|', a + 1, true)
  local after, c, kf = string.sub(v, 1, a - 1), string.sub(v, a + 1, b - 1), string.sub(v, b + 1)
  if tonumber(after) > tonumber(charged) and redis.call('SADD', fixed, lateCharges[i]) == 1 then
    redis.call('EXPIRE', fixed, 604800)
    redis.call('HINCRBY', acctKey, 'bal', neg(c))
    if kf ~= '' then redis.call('HINCRBY', acctKey, kf, c) end
  end
end
redis.call('DEL', late)
local newer = redis.call('HGETALL', credits)
for i = 1, #newer, 2 do
  if tonumber(newer[i]) > tonumber(creditSeq) then redis.call('HINCRBY', acctKey, 'bal', newer[i + 1]) end
end
return redis.call('HGET', acctKey, 'bal'), redis.call('GET', resvKey) or '0'
