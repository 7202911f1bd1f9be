local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.Embedding(num_embeddings, embedding_dim, {padding_idx=, max_norm=, norm_type=2}):
-- a lookup table of learned rows, indexed by 1-based integer indices (int64, or another
-- integer dtype); weight ~ N(0, 1), the padding_idx row zero and never updated. Torch7's
-- form is nn.LookupTable (lib/nn/LookupTable.lua).
local Embedding, Module = torch.class('nn.Embedding', 'nn.Module')
function Embedding:__init(num_embeddings, embedding_dim, opts)
  Module.__init(self)
  if math.type(num_embeddings) ~= 'integer' or num_embeddings < 1 or math.type(embedding_dim) ~= 'integer'
     or embedding_dim < 1 then
    error(string.format('nn.Embedding: expected positive integer sizes, got %s and %s',
                        tostring(num_embeddings), tostring(embedding_dim)), 3)
  end
  opts = opts or {}
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  local pad = opts.padding_idx
  if pad ~= nil then
    if pad < 0 then pad = pad + num_embeddings + 1 end
    if pad < 1 or pad > num_embeddings then
      error(string.format('nn.Embedding: padding_idx %d out of range 1..%d', opts.padding_idx, num_embeddings), 3)
    end
  end
  self.padding_idx, self.max_norm, self.norm_type = pad, opts.max_norm, opts.norm_type or 2
  self.weight = nn.Parameter(torch.empty(num_embeddings, embedding_dim, {dtype = opts.dtype}))
  self:reset_parameters()
end

-- Embedding:reset_parameters(): weight ~ N(0, 1), the padding row zeroed.
function Embedding:reset_parameters()
  torch.no_grad(function()
    self.weight:normal_()
    if self.padding_idx then self.weight[self.padding_idx]:zero_() end
  end)
end

-- int64 indices from an integer tensor of another dtype (PyTorch's take int32 too)
local INTEGER = {int8 = true, int16 = true, int32 = true, uint8 = true}
function Embedding:updateOutput(idx)
  if torch.is_tensor(idx) and INTEGER[idx.dtype] then idx = idx:long() end
  return F.embedding(idx, self.weight, {padding_idx = self.padding_idx, max_norm = self.max_norm,
                                        norm_type = self.norm_type})
end

function Embedding:extra_repr()
  local s = self.num_embeddings .. ', ' .. self.embedding_dim
  if self.padding_idx then s = s .. ', padding_idx=' .. self.padding_idx end
  if self.max_norm then s = s .. ', max_norm=' .. string.format('%g', self.max_norm) end
  return s
end

return Embedding
