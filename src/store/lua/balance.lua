-- KEYS: the user's base key.
bind(KEYS[1])
sweep()
if redis.call('EXISTS', acct) == 0 then return nil end
return {redis.call('HGET', acct, 'bal'), redis.call('GET', resv) or '0'}
