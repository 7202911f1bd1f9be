-- examples/nn_tour.lua: one model, trained PyTorch-style and Torch7-style.
-- Run: th examples/nn_tour.lua
local nn = require 'nn'
torch.manual_seed(1)

-- a toy regression: y = sin(x1) + x2^2 / 2
local x = torch.rand(256, 2) * 4 - 2
local y = (x:select(2, 1):sin() + x:select(2, 2):pow(2) / 2):view(256, 1)

local function make() return nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1)) end

-- PyTorch style: model(x), loss:backward(), update the parameters
local model = make()
print(model)
local crit = nn.MSELoss()
for epoch = 1, 200 do
  model:zero_grad()
  local loss = crit(model(x), y)
  loss:backward()
  torch.no_grad(function()
    for _, p in ipairs(model:parameters()) do p:add_(p.grad, {alpha = -0.1}) end
  end)
  if epoch % 50 == 0 then print(string.format('PyTorch style, epoch %3d: loss %.4f', epoch, loss:item())) end
end

-- Torch7 style: forward, criterion backward, module backward, flat parameters
local model7 = make()
local w, dw = model7:getParameters()
print(string.format('getParameters: %d weights in one tensor', w:numel()))
local mse = nn.MSECriterion()
for epoch = 1, 200 do
  dw:zero()
  local out = model7:forward(x)
  local err = mse:forward(out, y)
  model7:backward(x, mse:backward(out, y))
  w:add_(dw, {alpha = -0.1})
  if epoch % 50 == 0 then print(string.format('Torch7 style,  epoch %3d: loss %.4f', epoch, err)) end
end
