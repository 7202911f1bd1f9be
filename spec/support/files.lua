-- spec/support/files.lua: reading and writing whole files in the specs
-- (loaded with dofile; not a spec itself).
local M = {}

-- the bytes of path; fails when it cannot be opened
function M.read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end

function M.write(path, bytes)
  local f = assert(io.open(path, 'wb'))
  f:write(bytes)
  f:close()
end

return M
