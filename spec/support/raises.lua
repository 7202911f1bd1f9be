-- raises(text, fn, ...): fn(...) raises an error whose message contains text
-- (plain, not a pattern), as the specs of a feature's refusals check it.
return function(text, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, 'expected an error containing: ' .. text)
  assert(tostring(err):find(text, 1, true), 'expected "' .. text .. '", got "' .. tostring(err) .. '"')
end
