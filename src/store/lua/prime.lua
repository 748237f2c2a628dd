-- KEYS: acct, fixed, late, resv. ARGV: balance, charged, generation, then field/value pairs.
-- `late` holds charges acknowledged while no account was loaded; those committed after the
-- snapshot (charged after > the snapshot's total) are not in it, and are taken now. Answers the
-- balance loaded and the total held, or nothing when an account was loaded already.
if redis.call('EXISTS', KEYS[1]) == 1 then return nil end
redis.call('HSET', KEYS[1], 'bal', ARGV[1], 'cbase', ARGV[2], 'gen', ARGV[3])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local late = redis.call('HGETALL', KEYS[3])
for i = 1, #late, 2 do
  local v = late[i + 1]
  local a = string.find(v, '|', 1, true)
  local b = string.find(v, '|', a + 1, true)
  local after, c, kf = string.sub(v, 1, a - 1), string.sub(v, a + 1, b - 1), string.sub(v, b + 1)
  if tonumber(after) > tonumber(ARGV[2]) and redis.call('SADD', KEYS[2], late[i]) == 1 then
    redis.call('EXPIRE', KEYS[2], 604800)
    redis.call('HINCRBY', KEYS[1], 'bal', neg(c))
    if kf ~= '' then redis.call('HINCRBY', KEYS[1], kf, c) end
  end
end
redis.call('DEL', KEYS[3])
return {redis.call('HGET', KEYS[1], 'bal'), redis.call('GET', KEYS[4]) or '0'}
