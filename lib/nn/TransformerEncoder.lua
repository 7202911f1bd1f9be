local torch = require 'torch'
local nn = require 'nn'

-- nn.TransformerEncoder(encoder_layer, num_layers, {norm=}): num_layers copies of
-- encoder_layer (each with its own parameters), then an optional final norm module.
local TransformerEncoder, Module = torch.class('nn.TransformerEncoder', 'nn.Module')
function TransformerEncoder:__init(layer, num_layers, opts)
  Module.__init(self)
  if math.type(num_layers) ~= 'integer' or num_layers < 1 then
    error('nn.TransformerEncoder: num_layers must be a positive integer', 3)
  end
  opts = opts or {}
  local copies = {}
  for i = 1, num_layers do copies[i] = layer:clone() end
  self.layers = nn.ModuleList(copies)
  self.num_layers = num_layers
  if opts.norm then self.norm = opts.norm end
end

-- encoder(src, {mask=, src_key_padding_mask=, is_causal=}): src through every layer.
function TransformerEncoder:updateOutput(src, opts)
  opts = opts or {}
  local x = src
  for i = 1, self.num_layers do
    x = self.layers[i](x, {src_mask = opts.mask, src_key_padding_mask = opts.src_key_padding_mask,
                            is_causal = opts.is_causal})
  end
  if self.norm then x = self.norm(x) end
  return x
end

return TransformerEncoder
