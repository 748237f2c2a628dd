-- Drops a loaded account (the next request loads it again). KEYS: the user's acct and limits.
-- ARGV: the count of cap changes the account's loads must hold from now on (users.limits_seq;
-- '' for none) and how long that is remembered (ms). The mark only rises: changes reach the
-- store in any order.
local acct, limits = KEYS[1], KEYS[2]
local limitsSeq, memoryMs = ARGV[1], ARGV[2]
if limitsSeq ~= '' and tonumber(limitsSeq) > tonumber(redis.call('GET', limits) or '0') then
  redis.call('SET', limits, limitsSeq, 'PX', memoryMs)
end
redis.call('DEL', acct)
