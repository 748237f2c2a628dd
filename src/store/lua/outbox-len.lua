-- An outbox shard's length, read once per call: reserves append nothing to it.
local xlens = {}
local function outboxLen(key)
  local n = xlens[key]
  if not n then
    n = redis.call('XLEN', key)
    xlens[key] = n
  end
  return n
end
