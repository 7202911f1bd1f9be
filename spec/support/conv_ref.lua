-- spec/support/conv_ref.lua: the references the convolution specs share (loaded with
-- dofile; not a spec itself): conv2d by its definition, the shapes that reach each of the
-- float32 kernel's roads, and the check of its gradients against float64's, which
-- conv_kernels_spec runs in process and, through conv_level_checks.lua, at every x86-64
-- level the direct kernel is built for.
local torch = require 'torch'
local M = {}

-- conv2d by definition: y[n][o][i][j] = b[o] + sum over the group's channels
-- and taps of x at (i * sh - pt + a * dh, j * sw - pl + q * dw), zero outside
function M.naive_conv2d(x, w, b, s, pad, d, groups)
  local N, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local O, Cg, KH, KW = w:size(1), w:size(2), w:size(3), w:size(4)
  local pt, pb, pl, pr = pad[1], pad[2], pad[3], pad[4]
  local OH = (H + pt + pb - d[1] * (KH - 1) - 1) // s[1] + 1
  local OW = (W + pl + pr - d[2] * (KW - 1) - 1) // s[2] + 1
  local xv, wv = x:double():totable(), w:double():totable()
  local y = torch.zeros(N, O, OH, OW, {dtype = 'float64'})
  local Og = O // groups
  for n = 1, N do
    for o = 1, O do
      local g0 = (o - 1) // Og * Cg
      for i = 1, OH do
        for j = 1, OW do
          local sum = b and b[o] or 0
          for c = 1, Cg do
            for a = 1, KH do
              for q = 1, KW do
                local r = (i - 1) * s[1] - pt + (a - 1) * d[1] + 1
                local t = (j - 1) * s[2] - pl + (q - 1) * d[2] + 1
                if r >= 1 and r <= H and t >= 1 and t <= W then
                  sum = sum + xv[n][g0 + c][r][t] * wv[o][c][a][q]
                end
              end
            end
          end
          y[n][o][i][j] = sum
        end
      end
    end
  end
  return y
end

-- {x size, weight size, stride, pads (top, bottom, left, right), dilation, groups}
M.CASES = {
  {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
  {{1, 4, 9, 8}, {4, 2, 3, 2}, {2, 1}, {0, 0, 1, 1}, {1, 2}, 2},
  {{3, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4},      -- depthwise
  {{2, 2, 10, 9}, {6, 2, 5, 3}, {2, 3}, {2, 2, 1, 1}, {2, 1}, 1},
  {{1, 3, 5, 5}, {2, 3, 2, 2}, {1, 1}, {0, 1, 0, 1}, {1, 1}, 1},      -- 'same' with an even kernel
  {{2, 5, 4, 11}, {3, 5, 1, 4}, {1, 2}, {0, 0, 3, 0}, {1, 3}, 1},
}

function M.conv(x, w, b, cs)
  local s, p, d = cs[3], cs[4], cs[5]
  return torch._conv2d(x, w, b, s[1], s[2], p[1], p[2], p[3], p[4], d[1], d[2], cs[6])
end


-- The float32 kernels take different roads by shape (column planes, the last positions of
-- several images packed in one vector, outer-product or lane-sum weight gradients, phase
-- planes, im2col for strides; the bias gradient fused into the weight gradient's pass):
-- each must give float64's gradients.
M.PATHS = {
  {{4, 3, 14, 14}, {24, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},   -- 'same': rows as wide as the image
  {{3, 2, 9, 11}, {80, 2, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},    -- 'valid'; channels past 64
  {{3, 6, 9, 11}, {80, 6, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},    -- the same, taps enough for outer products
  {{5, 1, 28, 28}, {32, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},   -- a first layer: few taps, lane sums
  {{2, 8, 7, 7}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8},      -- depthwise: lane sums
  {{2, 4, 8, 8}, {6, 2, 5, 5}, {1, 1}, {1, 3, 2, 0}, {1, 2}, 2},      -- asymmetric pads, dilation
  {{2, 3, 6, 6}, {16, 3, 3, 3}, {1, 1}, {3, 3, 3, 3}, {1, 1}, 1},     -- input gradient crops
  {{2, 48, 48, 48}, {16, 48, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- planes past the cache: phase planes
  {{2, 3, 9, 9}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},     -- strided
  {{37, 16, 28, 28}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- many chunks, two threads
  {{13, 20, 14, 14}, {40, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- packed row ends, partial packs
}

-- the float32 gradients (input, weight, bias) of every case in M.PATHS against float64's,
-- at 2 threads: a list of what differs (empty when all agree)
function M.float32_path_errors()
  local errors = {}
  local threads = torch.getnumthreads()
  torch.setnumthreads(2)
  torch.manual_seed(17)
  for i, cs in ipairs(M.PATHS) do
    local x64 = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = 'float64'})
    local w64 = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64'}) * 0.3
    local b64 = torch.randn(cs[2][1], {dtype = 'float64'})
    local grads = {}
    for _, dtype in ipairs({'float64', 'float32'}) do
      local x, w, b = x64:detach():to(dtype):requires_grad_(), w64:detach():to(dtype):requires_grad_(),
                      b64:detach():to(dtype):requires_grad_()
      local y = M.conv(x, w, b, cs)
      local r = torch.arange(0, y:numel(), {dtype = 'float64'}):view(y:size()):mul(0.37):sin():to(dtype)
      local loss = (y * r):sum()
      loss:backward()
      grads[dtype] = {x.grad, w.grad, b.grad}
    end
    for k, name in ipairs({'input', 'weight', 'bias'}) do
      local want, got = grads.float64[k], grads.float32[k]
      local diff = (want - got:double()):abs():max():item()
      local scale = want:abs():max():item()
      if not (diff <= 2e-5 * (1 + scale)) then
        errors[#errors + 1] = string.format('case %d, %s gradient: max difference %g at scale %g', i, name, diff, scale)
      end
    end
  end
  torch.setnumthreads(threads)
  return errors
end

return M
