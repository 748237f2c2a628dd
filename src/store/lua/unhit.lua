-- A key whose window ended is gone: nothing to give back, and no key is made without its expiry.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0
