-- KEYS: an outbox shard, then per account of that shard: acct, fixed, late. ARGV: item count, then per item: entry id,
-- account index, cost, generation, spend field, kind (I/R/D/X), charged after.
-- A correction is applied at most once per entry (the `fixed` set remembers it), whatever became
-- of the stream meanwhile: a commit that straddles a flush still corrects the new account. A
-- committed charge acknowledged while no account is loaded is left in `late` for the next load.
local n = tonumber(ARGV[1])
local ids = {}
for i = 0, n - 1 do ids[i + 1] = ARGV[2 + i * 7] end
-- In slices: unpack() is limited by Lua's C stack (8,000), USAGE_BATCH_MAX is not.
for i = 1, n, 1000 do
  local j = math.min(i + 999, n)
  redis.call('XACK', KEYS[1], '$GROUP', unpack(ids, i, j))
  redis.call('XDEL', KEYS[1], unpack(ids, i, j))
end
-- Nothing below changes a generation, so each account's is read once.
local gens = {}
for i = 0, n - 1 do
  local b = 2 + i * 7
  local eid, c, g, kf, kind, after = ARGV[b], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6]
  local ai = tonumber(ARGV[b + 1])
  local acct, fixed, late = KEYS[ai * 3 - 1], KEYS[ai * 3], KEYS[ai * 3 + 1]
  if kind ~= 'X' then
    local cur = gens[acct]
    if cur == nil then
      cur = redis.call('HGET', acct, 'gen')
      gens[acct] = cur
    end
    if cur then
      local delta = nil
      if kind == 'D' then
        if g == cur then delta = c end
      elseif g ~= cur and tonumber(redis.call('HGET', acct, 'cbase')) < tonumber(after) then
        delta = neg(c)
      end
      if delta and redis.call('SADD', fixed, eid) == 1 then
        redis.call('EXPIRE', fixed, 604800)
        redis.call('HINCRBY', acct, 'bal', delta)
        if kf ~= '' then redis.call('HINCRBY', acct, kf, delta == c and neg(c) or c) end
      end
    elseif kind ~= 'D' then
      redis.call('HSET', late, eid, after .. '|' .. c .. '|' .. kf)
      redis.call('EXPIRE', late, 604800)
    end
  end
end
return n
