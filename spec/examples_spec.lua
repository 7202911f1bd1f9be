-- The examples run: they are documentation that must not rot.
local torch = require 'torch'
local function find_th()
  local th = os.getenv('TH_BIN')
  for template in package.cpath:gmatch('[^;]+') do
    local dir = template:match('^(.*)/%?%.so$')
    local f = not th and dir and io.open(dir .. '/th', 'rb')
    if f then f:close(); th = dir .. '/th' end
  end
  return th or './build/th'
end
local TH = find_th()

local function run(args)
  local p = io.popen(TH .. ' ' .. args .. ' 2>&1')
  local out = p:read('a')
  local ok = p:close()
  return ok, out
end

describe('examples', function()
  it('tensors_tour.lua and nn_tour.lua run', function()
    local ok, out = run('examples/tensors_tour.lua')
    assert.is_true(ok, out)
    ok, out = run('examples/nn_tour.lua')
    assert.is_true(ok, out)
    assert.truthy(out:find('Torch7 style,  epoch 200', 1, true), out)
  end)

  it('resnet_block.lua trains a step and checks the block gradients', function()
    local ok, out = run('examples/resnet_block.lua')
    assert.is_true(ok, out)
    assert.truthy(out:find('gradcheck of a ResidualBlock (input):\ttrue', 1, true), out)
    assert.truthy(out:find('conv1 weight gradient: autograd', 1, true), out)
  end)

  it('fashion_mnist_mlp.lua trains, evaluates and writes its checkpoint', function()
    local f = io.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz')
    if not f then
      pending('dataset-fashion-mnist is not installed: the FashionMNIST example not run')
      return
    end
    f:close()
    local ck = os.tmpname()
    local ok, out = run('examples/fashion_mnist_mlp.lua --epochs 1 --limit 60 --workers 1 --checkpoint ' .. ck)
    assert.is_true(ok, out)
    local acc = tonumber(out:match('test accuracy ([%d.]+)%%'))
    assert.is_true(acc and acc > 60, out)
    local loaded = torch.load(ck)
    os.remove(ck)
    assert.are.same({256, 784}, loaded.model['2.weight']:size():totable())
  end)

  it('fashion_mnist_cnn.lua trains the CNN a few batches and writes its checkpoint', function()
    local f = io.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz')
    if not f then
      pending('dataset-fashion-mnist is not installed: the FashionMNIST example not run')
      return
    end
    f:close()
    local ck = os.tmpname()
    local ok, out = run('examples/fashion_mnist_cnn.lua --epochs 1 --limit 30 --checkpoint ' .. ck)
    assert.is_true(ok, out)
    local acc = tonumber(out:match('test accuracy ([%d.]+)%%'))
    assert.is_true(acc and acc > 50, out)
    local loaded = torch.load(ck)
    os.remove(ck)
    assert.are.same({32, 1, 3, 3}, loaded.model['1.weight']:size():totable())
    assert.are.same({64}, loaded.model['6.running_mean']:size():totable())
  end)
end)
