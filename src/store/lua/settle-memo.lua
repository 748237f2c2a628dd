-- The settled hashes whose expiry this call has set already: once per call is enough.
local expiring = {}
