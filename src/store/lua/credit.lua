-- A credit committed in Postgres as the user's seq-th (users.credit_seq). KEYS: the user's acct
-- and credits (hash: seq → amount). ARGV: the amount, its seq, how long credits are remembered
-- (ms). A loaded account takes it when its snapshot did not hold it (`cseq`, the snapshot's count,
-- is lower); every credit is also remembered, so that a load whose snapshot was read before this
-- commit takes it (prime.lua). Answers the new balance, or false when the account did not take it.
local acct, credits = KEYS[1], KEYS[2]
local amount, seq, memoryMs = ARGV[1], ARGV[2], ARGV[3]
redis.call('HSET', credits, seq, amount)
redis.call('PEXPIRE', credits, memoryMs)
if redis.call('EXISTS', acct) == 1 and tonumber(seq) > tonumber(redis.call('HGET', acct, 'cseq') or '0') then
  return redis.call('HINCRBY', acct, 'bal', amount)
end
return false
