-- A lease (LeaseRequest), batched (batch.ts): per call KEYS[ko + 1] is the user's base key,
-- KEYS[ko + 2] the outbox shard of the user. Growth takes at most a LEASE_SHARE-th of what is
-- available, never less than `need`. Answers status and what was granted: 1 done, 0 too little
-- available (then what is), -1 no account loaded, -3 outbox full, -5 an `extend` whose hold is
-- gone.
-- mode: 'open', 'extend' or 'close'; need, grow: nano-USD to take at least, and at most;
-- give: what a close gives back; ttl: ms the hold lives unless extended.
local id, mode, need, grow, give, ttl = ARGV[ao + 1], ARGV[ao + 2], tonumber(ARGV[ao + 3]), tonumber(ARGV[ao + 4]), tonumber(ARGV[ao + 5]), tonumber(ARGV[ao + 6])
local outboxMax = tonumber(ARGV[ao + 7])
bind(KEYS[ko + 1])
sweep()
local held = redis.call('HGET', res, id)
if mode == 'close' then
  if not held then return 1, 0 end
  local hold = tonumber(held)
  local back = math.min(give, hold)
  if back > 0 then redis.call('DECRBY', resv, int(back)) end
  if hold == back then
    redis.call('HDEL', res, id)
    redis.call('ZREM', resx, id)
  else
    redis.call('HSET', res, id, int(hold - back))
  end
  return 1, 0
end
if mode == 'extend' and not held then return -5, 0 end
if outboxMax > 0 and outboxLen(KEYS[ko + 2]) >= outboxMax then return -3, 0 end
local bal = redis.call('HGET', acct, 'bal')
if not bal then return -1, 0 end
local available = tonumber(bal) - tonumber(redis.call('GET', resv) or '0')
if need > available then return 0, available end
local granted = math.max(need, math.min(grow, math.floor(available / $LEASE_SHARE)))
redis.call('HSET', res, id, int(tonumber(held or '0') + granted))
redis.call('ZADD', resx, now + ttl, id)
if granted > 0 then redis.call('INCRBY', resv, int(granted)) end
return 1, granted
