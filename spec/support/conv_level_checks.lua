-- spec/support/conv_level_checks.lua: the float32 convolution checked at the level of the
-- direct kernel that TH_CONV_ISA picks (run by conv_kernels_spec once per level this CPU
-- has): values against conv2d's definition, and every kernel road's gradients against
-- float64's. Prints the level that ran, one line per failure, then 'DONE' and the count.
local ref = dofile('spec/support/conv_ref.lua')
local failures = 0
local function fail(what)
  failures = failures + 1
  print('FAIL ' .. what)
end

print('LEVEL ' .. torch._conv_kernel())

torch.manual_seed(7)
for i, cs in ipairs(ref.CASES) do
  local x = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4])
  local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4])
  local b = torch.randn(cs[2][1])
  for _, bias in ipairs({b, false}) do
    local want = ref.naive_conv2d(x, w, bias or nil, cs[3], cs[4], cs[5], cs[6])
    local got = ref.conv(x, w, bias or nil, cs)
    local diff = (want - got:double()):abs():max():item()
    if not (diff <= 1e-4) then fail(('case %d%s: max difference %g from the definition'):format(i, bias and ' with bias' or '', diff)) end
  end
end

for _, e in ipairs(ref.float32_path_errors()) do fail(e) end
print('DONE ' .. failures)
