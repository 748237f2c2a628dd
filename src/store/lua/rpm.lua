-- One count in the key's fixed one-minute window (`<base>:rpm:<keyId>:<minute>`); the ms to
-- wait when `limit` (0 = none) is exceeded, else nil.
local function rpmWait(base, keyId, limit)
  if limit <= 0 then return nil end
  local q = base .. ':rpm:' .. keyId .. ':' .. math.floor(now / 60000)
  local n = redis.call('INCR', q)
  if n == 1 then redis.call('PEXPIRE', q, 61000) end
  if n > limit then return 60000 - (now % 60000) end
  return nil
end
