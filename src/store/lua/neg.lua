-- Negation of a non-negative integer string (HINCRBY refuses "-0").
local function neg(s) if s == '0' then return '0' end return '-' .. s end
-- An integer as Redis reads one: a Lua number as an argument would be written as "%.14g",
-- which turns amounts from 10^14 nano-USD up into exponents.
local function int(x) return string.format('%d', x) end
