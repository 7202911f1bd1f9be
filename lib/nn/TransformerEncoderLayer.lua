local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.TransformerEncoderLayer(d_model, nhead, {dim_feedforward=2048, dropout=0.1,
-- activation='relu'|'gelu', layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true}):
-- self-attention and a feed-forward block, each with a residual connection and LayerNorm
-- (after, or before with norm_first as in GPT).
local TransformerEncoderLayer, Module = torch.class('nn.TransformerEncoderLayer', 'nn.Module')
function TransformerEncoderLayer:__init(d_model, nhead, opts)
  Module.__init(self)
  opts = opts or {}
  local ff, p = opts.dim_feedforward or 2048, opts.dropout or 0.1
  local dt = opts.dtype
  self.self_attn = nn.MultiheadAttention(d_model, nhead, {dropout = p, batch_first = opts.batch_first,
                                                          bias = opts.bias, dtype = dt})
  self.linear1 = nn.Linear(d_model, ff, {bias = opts.bias ~= false, dtype = dt})
  self.dropout = nn.Dropout(p)
  self.linear2 = nn.Linear(ff, d_model, {bias = opts.bias ~= false, dtype = dt})
  self.norm_first = opts.norm_first or false
  self.norm1 = nn.LayerNorm(d_model, {eps = opts.layer_norm_eps or 1e-5, dtype = dt})
  self.norm2 = nn.LayerNorm(d_model, {eps = opts.layer_norm_eps or 1e-5, dtype = dt})
  self.dropout1 = nn.Dropout(p)
  self.dropout2 = nn.Dropout(p)
  local act = opts.activation or 'relu'
  if act ~= 'relu' and act ~= 'gelu' then
    error("nn.TransformerEncoderLayer: activation must be 'relu' or 'gelu', got '" .. tostring(act) .. "'", 3)
  end
  self.activation = act
end

function TransformerEncoderLayer:_sa_block(x, opts)
  local out = self.self_attn(x, x, x, {attn_mask = opts.src_mask, key_padding_mask = opts.src_key_padding_mask,
                                       is_causal = opts.is_causal, need_weights = false})
  return self.dropout1(out)
end

function TransformerEncoderLayer:_ff_block(x)
  local h = self.linear1(x)
  h = self.activation == 'gelu' and F.gelu(h) or F.relu(h)
  return self.dropout2(self.linear2(self.dropout(h)))
end

-- layer(src, {src_mask=, src_key_padding_mask=, is_causal=}): the encoded src (same shape).
function TransformerEncoderLayer:updateOutput(src, opts)
  opts = opts or {}
  local x = src
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), opts)
    x = x + self:_ff_block(self.norm2(x))
  else
    x = self.norm1(x + self:_sa_block(x, opts))
    x = self.norm2(x + self:_ff_block(x))
  end
  return x
end

return TransformerEncoderLayer
