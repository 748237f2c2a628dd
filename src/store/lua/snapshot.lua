-- KEYS: an outbox shard, then per account of that shard: acct, res, resv. ARGV: user ids in the
-- same order.
-- One pass over the outbox, atomically with the accounts it is compared with. Each account's
-- row ends with the settle ids of the entries its balance carries (comma-separated): one may be
-- committed already, its acknowledgement not yet run, and reconcile must not count it twice.
-- (The record's positional layout, hot.ts, puts the settle id first: `[1,"<id>",`.)
local idx = {}
local out = {}
for i = 1, #ARGV do
  local acct, res = KEYS[2 + (i - 1) * 3], KEYS[3 + (i - 1) * 3]
  local holds = 0
  local vals = redis.call('HVALS', res)
  for _, a in ipairs(vals) do
    if a ~= 'settled' then
      local sep = string.find(a, '|', 1, true)
      holds = holds + tonumber(sep and string.sub(a, 1, sep - 1) or a)
    end
  end
  local row = {ARGV[i], redis.call('HGET', acct, 'bal') or '', redis.call('GET', KEYS[4 + (i - 1) * 3]) or '0', tostring(holds), 0, 0, redis.call('HGET', acct, 'gen') or '', {}}
  out[i] = row
  idx[ARGV[i]] = i
end
local entries = redis.call('XRANGE', KEYS[1], '-', '+')
for _, e in ipairs(entries) do
  local f = {}
  for j = 1, #e[2], 2 do f[e[2][j]] = e[2][j + 1] end
  local i = idx[f['u']]
  if i then
    if f['g'] ~= '' and f['g'] == out[i][7] then
      out[i][5] = out[i][5] + tonumber(f['c'])
      local r = f['r'] or ''
      local q = string.sub(r, 1, 4) == '[1,"' and string.find(r, '"', 5, true)
      if q then table.insert(out[i][8], string.sub(r, 5, q - 1)) end
    else out[i][6] = out[i][6] + tonumber(f['c']) end
  end
end
for i = 1, #out do
  out[i][5] = tostring(out[i][5])
  out[i][6] = tostring(out[i][6])
  out[i][8] = table.concat(out[i][8], ',')
end
return out
