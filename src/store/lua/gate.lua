-- KEYS: the user's base key. ARGV: keyId, rpmLimit.
bind(KEYS[1])
sweep()
if redis.call('EXISTS', acct) == 0 then return {-1, 0} end
local wait = rpmWait(KEYS[1], ARGV[1], tonumber(ARGV[2]))
if wait then return {-2, wait} end
if tonumber(redis.call('HGET', acct, 'bal')) - tonumber(redis.call('GET', resv) or '0') <= 0 then return {0, 0} end
return {1, 0}
