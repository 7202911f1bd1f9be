-- data.transforms: image tensor transforms, each a callable object.
-- ToTensor, Normalize and Compose of them also work on a whole batch
-- (transform.batchable; called as t(batch, true)), so datasets can
-- transform batches in one go.
local torch = require 'torch'
local data = require 'data'

local T = {}
data.transforms = T

local function callable(fn, batchable, name)
  return setmetatable({batchable = batchable, name = name}, {
    __call = function(_, x, batched) return fn(x, batched) end,
    __tostring = function() return name end,
  })
end

-- T.ToTensor(): uint8 images H x W (or C x H x W, or a batch N x H x W / N x C x H x W)
-- to float32 in [0, 1], with a channel dim (1 x H x W for gray images).
function T.ToTensor()
  return callable(function(x, batched)
    if not torch.is_tensor(x) then error('ToTensor: expected a tensor image', 2) end
    local y = x.dtype == 'uint8' and x:float():div_(255) or x:float()   -- x:float() of bytes is a new tensor
    if x:dim() == (batched and 3 or 2) then y = y:unsqueeze(batched and 2 or 1) end   -- gray: a channel dim
    return y
  end, true, 'ToTensor()')
end

-- T.Normalize(mean, std): (x - mean) / std per channel (tables or numbers), for
-- C x H x W images or N x C x H x W batches.
function T.Normalize(mean, std)
  mean = type(mean) == 'number' and {mean} or mean
  std = type(std) == 'number' and {std} or std
  if #mean ~= #std then error('Normalize: mean and std have different lengths', 2) end
  for _, s in ipairs(std) do if s == 0 then error('Normalize: std of 0', 2) end end
  local m, s = torch.tensor(mean), torch.tensor(std)
  local views = {}    -- [dtype][batched]: {mean, std} shaped to broadcast, made once
  return callable(function(x, batched)
    if not torch.is_tensor(x) or not x:is_floating_point() then
      error('Normalize: expected a floating-point tensor (ToTensor first), got ' ..
            (torch.is_tensor(x) and x.dtype or type(x)), 2)
    end
    local c = #mean
    local by_dtype = views[x.dtype] or {}
    views[x.dtype] = by_dtype
    local key = batched and 'batch' or 'image'
    local v = by_dtype[key]
    if not v then
      local shape = batched and {1, c, 1, 1} or {c, 1, 1}
      v = {m:to(x.dtype):view(shape), s:to(x.dtype):view(shape)}
      by_dtype[key] = v
    end
    return (x - v[1]):div_(v[2])   -- x - mean is a new tensor: divide it in place
  end, true, 'Normalize(...)')
end

-- T.RandomHorizontalFlip(p=0.5): flips C x H x W (or H x W) images left-right with probability p.
function T.RandomHorizontalFlip(p)
  p = p or 0.5
  return callable(function(x)
    if torch.rand(1)[1] < p then return x:flip(x:dim()) end
    return x
  end, false, 'RandomHorizontalFlip()')
end

-- T.RandomCrop(size, {padding=0}): a random size x size crop (after zero padding).
function T.RandomCrop(size, opts)
  local pad = opts and opts.padding or 0
  local h, w = type(size) == 'table' and size[1] or size, type(size) == 'table' and size[2] or size
  return callable(function(x)
    local img = x
    local H, W = img:size(img:dim() - 1), img:size(img:dim())
    if pad > 0 then
      local shape = img:size():totable()
      shape[#shape - 1], shape[#shape] = H + 2 * pad, W + 2 * pad
      local padded = torch.zeros(shape, {dtype = img.dtype})
      padded:narrow(img:dim() - 1, pad + 1, H):narrow(img:dim(), pad + 1, W):copy_(img)
      img, H, W = padded, H + 2 * pad, W + 2 * pad
    end
    if h > H or w > W then error(string.format('RandomCrop: crop %dx%d larger than the image %dx%d', h, w, H, W), 2) end
    local top = math.floor(torch.rand(1)[1] * (H - h + 1)) + 1
    local left = math.floor(torch.rand(1)[1] * (W - w + 1)) + 1
    return img:narrow(img:dim() - 1, top, h):narrow(img:dim(), left, w)
  end, false, 'RandomCrop(' .. h .. ')')
end

-- T.Lambda(fn): fn as a transform.
function T.Lambda(fn) return callable(fn, false, 'Lambda') end

-- T.Compose({t1, t2, ...}): the transforms one after the other.
function T.Compose(list)
  local batchable = true
  for _, t in ipairs(list) do if not t.batchable then batchable = false end end
  return callable(function(x, batched)
    for _, t in ipairs(list) do x = t(x, batched) end
    return x
  end, batchable, 'Compose')
end

return data
