-- examples/tensors_tour.lua: a short walk through moontorch tensors.
-- Run: th examples/tensors_tour.lua
print('moontorch -- tensors at work\n')

local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
print('x = torch.tensor({{1, 2, 3}, {4, 5, 6}})  -- integers give int64')
print(x)

local y = torch.ones(2, 3) * 0.5
print('\ny = torch.ones(2, 3) * 0.5')
print(y)

print('\nx + y (int64 + float32 promotes to float32)')
print(x + y)

print('\nviews share storage: t = x:t()')
local t = x:t()
print(t)
print('t:isContiguous() =', t:isContiguous(), ' same storage:', t:storage() == x:storage())

print('\nslicing Torch7-style: x[{2, {2, 3}}]')
print(x[{2, {2, 3}}])

x[{1, 2}] = 20
print('\nafter x[{1, 2}] = 20, the view t sees it: t[2][1] =', t[2][1])

print('\nbroadcasting: a column plus a row')
local col = torch.tensor({{1}, {2}, {3}}):float()
local row = torch.tensor({10, 20}):float()
print(col + row)

print('\nelementwise math: (torch.ones(3) * 2):exp()')
print((torch.ones(3) * 2):exp())
