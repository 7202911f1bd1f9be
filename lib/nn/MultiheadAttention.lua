local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local init = require 'nn.initialization'

-- nn.MultiheadAttention(embed_dim, num_heads, {dropout=0, bias=true, batch_first=false,
-- kdim=, vdim=}): attention over num_heads heads of embed_dim / num_heads each, with
-- PyTorch's parameters: in_proj_weight (3E, E) and in_proj_bias (or q/k/v_proj_weight
-- when kdim or vdim differ), and out_proj (an nn.Linear).
local MultiheadAttention, Module = torch.class('nn.MultiheadAttention', 'nn.Module')
function MultiheadAttention:__init(embed_dim, num_heads, opts)
  Module.__init(self)
  opts = opts or {}
  if math.type(embed_dim) ~= 'integer' or math.type(num_heads) ~= 'integer' or num_heads < 1
     or embed_dim % num_heads ~= 0 then
    error(string.format('nn.MultiheadAttention: embed_dim (%s) must be divisible by num_heads (%s)',
                        tostring(embed_dim), tostring(num_heads)), 3)
  end
  self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
  self.kdim, self.vdim = opts.kdim or embed_dim, opts.vdim or embed_dim
  self.dropout, self.batch_first = opts.dropout or 0, opts.batch_first or false
  self.same_dims = self.kdim == embed_dim and self.vdim == embed_dim
  local dt = {dtype = opts.dtype}
  if self.same_dims then
    self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim, dt))
  else
    self.q_proj_weight = nn.Parameter(torch.empty(embed_dim, embed_dim, dt))
    self.k_proj_weight = nn.Parameter(torch.empty(embed_dim, self.kdim, dt))
    self.v_proj_weight = nn.Parameter(torch.empty(embed_dim, self.vdim, dt))
  end
  if opts.bias ~= false then self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim, dt)) end
  self.out_proj = nn.Linear(embed_dim, embed_dim, {bias = opts.bias ~= false, dtype = opts.dtype})
  self:reset_parameters()
end

-- reset_parameters(): Xavier-uniform projections, zero biases (as PyTorch).
function MultiheadAttention:reset_parameters()
  if self.same_dims then init.xavier_uniform_(self.in_proj_weight)
  else
    init.xavier_uniform_(self.q_proj_weight); init.xavier_uniform_(self.k_proj_weight)
    init.xavier_uniform_(self.v_proj_weight)
  end
  torch.no_grad(function()
    if self.in_proj_bias then self.in_proj_bias:zero() end
    if self.out_proj.bias then self.out_proj.bias:zero() end
  end)
end

function MultiheadAttention:extra_repr()
  return string.format('embed_dim=%d, num_heads=%d', self.embed_dim, self.num_heads)
end

-- mha(query, key, value, {key_padding_mask=, need_weights=true, attn_mask=,
-- average_attn_weights=true, is_causal=false}): query (L, N, E) (batch_first: (N, L, E),
-- or unbatched (L, E)), key/value (S, N, kdim/vdim). Returns the output (like query) and,
-- when need_weights, the attention weights (N, L, S) averaged over heads (or (N, heads, L, S)),
-- after dropout in training as PyTorch.
-- Masks: bool true = not allowed for key_padding_mask (N, S) and for a bool attn_mask
-- (L, S) or (N * heads, L, S), as PyTorch; a float attn_mask is added to the scores.
-- The inputs are used in the layout they come in: the projections are one product over
-- every token whether the batch comes first or not, and the heads are views of them.
function MultiheadAttention:updateOutput(query, key, value, opts)
  opts = opts or {}
  key, value = key or query, value or key or query
  local unbatched = query:dim() == 2
  if unbatched then query, key, value = query:unsqueeze(2), key:unsqueeze(2), value:unsqueeze(2) end
  local batch_first = self.batch_first and not unbatched
  if query:dim() ~= 3 or query:size(3) ~= self.embed_dim then
    error(string.format('nn.MultiheadAttention: expected query (%s, %d), got %s',
                        batch_first and 'N, L' or 'L, N', self.embed_dim, tostring(query:size())), 3)
  end
  local seq, batch = batch_first and 2 or 1, batch_first and 1 or 2
  local L, N, E = query:size(seq), query:size(batch), self.embed_dim
  local S = key:size(seq)
  local Hh, D = self.num_heads, self.head_dim
  local q, k, v
  local b = self.in_proj_bias
  local bq, bk, bv
  if b then bq, bk, bv = b:narrow(1, 1, E), b:narrow(1, E + 1, E), b:narrow(1, 2 * E + 1, E) end
  if self.same_dims then
    local w = self.in_proj_weight
    q = F.linear(query, w:narrow(1, 1, E), bq)
    k = F.linear(key, w:narrow(1, E + 1, E), bk)
    v = F.linear(value, w:narrow(1, 2 * E + 1, E), bv)
  else
    q, k, v = F.linear(query, self.q_proj_weight, bq), F.linear(key, self.k_proj_weight, bk),
              F.linear(value, self.v_proj_weight, bv)
  end
  -- (N, len, E) or (len, N, E) -> (N, heads, len, D), a view; scaling q costs half what
  -- scaling the scores would
  local function heads(t, len)
    if batch_first then return t:view(N, len, Hh, D):permute(1, 3, 2, 4) end
    return t:view(len, N, Hh, D):permute(2, 3, 1, 4)
  end
  q, k, v = heads(q * (1 / math.sqrt(D)), L), heads(k, S), heads(v, S)
  local scores = q:matmul(k:transpose(-2, -1))                            -- (N, heads, L, S)
  local function add_mask(mask)
    if mask.dtype == 'bool' then return scores:masked_fill(mask, -math.huge) end
    return scores + mask
  end
  if opts.is_causal then
    scores = scores + torch.full({L, S}, -math.huge, {dtype = scores.dtype}):triu(1)
  end
  local am = opts.attn_mask
  if am ~= nil then
    if am:dim() == 3 then am = am:view(N, Hh, L, S) end
    scores = add_mask(am)
  end
  local kpm = opts.key_padding_mask
  if kpm ~= nil then
    if kpm:dim() == 1 then kpm = kpm:unsqueeze(1) end
    if kpm.dtype == 'bool' then scores = scores:masked_fill(kpm:view(N, 1, 1, S), -math.huge)
    else scores = scores + kpm:view(N, 1, 1, S) end
  end
  local attn = scores:softmax(-1)
  -- the weights returned are those used, after dropout, as PyTorch's
  if self.dropout > 0 then attn = F.dropout(attn, self.dropout, self.training) end
  local out = attn:matmul(v)                                              -- (N, heads, L, D)
  if batch_first then out = out:permute(1, 3, 2, 4):reshape(N, L, E)
  else out = out:permute(3, 1, 2, 4):reshape(L, N, E) end
  out = self.out_proj(out)
  if unbatched then out = out:squeeze(2) end
  if opts.need_weights == false then return out, nil end
  local weights = attn
  if opts.average_attn_weights ~= false then weights = attn:mean(2) end
  if unbatched then weights = weights:squeeze(1) end
  return out, weights
end

return MultiheadAttention
