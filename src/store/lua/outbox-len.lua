-- The outbox's length, read once per call: reserves append nothing to it.
local xlen = nil
local function outboxLen(key)
  if not xlen then xlen = redis.call('XLEN', key) end
  return xlen
end
