-- One charge (SettleRequest), batched (batch.ts): per call KEYS[ko + 1] is the user's base key,
-- KEYS[ko + 2] the outbox shard of the user. Answers 1 (or 0 for a repeat), the outbox entry's id
-- (a repeat's is the one its first settle wrote), the account's generation and what it took from
-- its lease (-1: the lease is gone).
-- spendField: the account field that sums the key's spend ('' none); spendFieldBefore: the
-- previous period's field, dropped when the period turns; record: the usage record for the
-- outbox ('' none); lease: the lease it drew from ('' none).
-- A settled id is remembered, with its entry's id, in the hash of its period of the clock
-- (`settled:<n>`), which expires as a whole two periods on: a repeat is looked for there only
-- when the hold is gone, and nothing is left in `res` and `resx` for sweeps to go through.
-- (Marking the hold "settled" and sweeping it a minute later kept a minute of one busy user's
-- requests in both: 1.8 million entries each in `npm run bench:hot-store`.) A repeat answers the
-- first entry's id because the process that repeats it is one whose first call's answer was
-- lost (a timeout): it has not kept that entry for its loss watch (redis-watch.ts), and only
-- the id lets it, so that a Redis losing data before a writer drained the entry cannot lose the
-- charge. `gen` exists exactly when the account is loaded (PRIME sets it).
bind(KEYS[ko + 1])
sweep()
local id, cost, period, userId = ARGV[ao + 1], ARGV[ao + 2], tonumber(ARGV[ao + 3]), ARGV[ao + 4]
local spendField, spendFieldBefore, record, lease = ARGV[ao + 5], ARGV[ao + 6], ARGV[ao + 7], ARGV[ao + 8]
local n = math.floor(now / period)
local doneNow = done .. n
-- A reservation drawn from a lease has no hold of its own: only the settled hashes tell a repeat.
local a = lease == '' and redis.call('HGET', res, id)
if a and a ~= 'settled' then
  release(a)
  redis.call('HDEL', res, id)
  redis.call('ZREM', resx, id)
else
  local first = a and '' or redis.call('HGET', doneNow, id) or redis.call('HGET', done .. (n - 1), id)
  if first then return 0, first, '', 0 end
end
-- From a lease: what was spent is no longer held, so its hold shrinks by the cost (never below
-- zero; a cost past it is charged all the same). Answers how much it took, -1 if it is gone.
local taken = 0
if lease ~= '' then
  local h = redis.call('HGET', res, lease)
  if h then
    taken = math.min(tonumber(cost), tonumber(h))
    if taken > 0 then
      redis.call('HSET', res, lease, int(tonumber(h) - taken))
      redis.call('DECRBY', resv, int(taken))
    end
  else
    taken = -1
  end
end
local gen = redis.call('HGET', acct, 'gen')
if gen then
  redis.call('HINCRBY', acct, 'bal', neg(cost))
  if spendField ~= '' then
    if spendFieldBefore ~= '' and redis.call('HEXISTS', acct, spendField) == 0 then redis.call('HDEL', acct, spendFieldBefore) end
    redis.call('HINCRBY', acct, spendField, cost)
  end
else
  gen = ''
end
local eid = ''
if record ~= '' then eid = redis.call('XADD', KEYS[ko + 2], '*', 'u', userId, 'c', cost, 'g', gen, 'kf', spendField, 'r', record) end
redis.call('HSET', doneNow, id, eid)
if not expiring[doneNow] then
  expiring[doneNow] = true
  redis.call('PEXPIREAT', doneNow, (n + 2) * period)
end
return 1, eid, gen, taken
