-- The builders of the recurrent layers: the cells (RNNCell, LSTMCell, GRUCell) and
-- the multi-step, multi-layer RNN, LSTM and GRU (batch_first, bidirectional, dropout
-- between layers), with PyTorch's parameter names (weight_ih_l1, bias_hh_l1_reverse,
-- ...; layers 1-based).
-- Gates are computed with one matrix product per weight, as PyTorch lays them out
-- (LSTM: input, forget, cell, output; GRU: reset, update, new).
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

local GATES = {RNN = 1, LSTM = 4, GRU = 3}

local function uniform_(t, bound)
  torch.no_grad(function() t:uniform_(-bound, bound) end)
  return t
end

-- reset_parameters(): every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)),
-- for the cells and the layers alike.
local function reset_parameters(self)
  local bound = 1 / math.sqrt(self.hidden_size)
  for _, p in ipairs(self:parameters()) do uniform_(p, bound) end
end

-- one step of a cell: x (B, in), state h (B, H) or {h, c}; returns the new state
local function rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity)
  local a = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
  return nonlinearity == 'relu' and a:relu() or a:tanh()
end

local function lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh)
  local gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
  local i, f, g, o = table.unpack(gates:chunk(4, -1))
  i, f, g, o = i:sigmoid(), f:sigmoid(), g:tanh(), o:sigmoid()
  local c2 = f * c + i * g
  return o * c2:tanh(), c2
end

local function gru_step(x, h, w_ih, w_hh, b_ih, b_hh)
  local gi = F.linear(x, w_ih, b_ih):chunk(3, -1)
  local gh = F.linear(h, w_hh, b_hh):chunk(3, -1)
  local r = (gi[1] + gh[1]):sigmoid()
  local z = (gi[2] + gh[2]):sigmoid()
  local n = (gi[3] + r * gh[3]):tanh()
  return (n - z * n) + z * h          -- (1 - z) n + z h
end

-- ---- cells ----
local function check_sizes(name, input_size, hidden_size)
  if math.type(input_size) ~= 'integer' or input_size < 1 or math.type(hidden_size) ~= 'integer' or hidden_size < 1 then
    error(string.format('nn.%s: input_size and hidden_size must be positive integers, got %s and %s', name,
                        tostring(input_size), tostring(hidden_size)), 4)
  end
end

-- cell_class(kind): defines nn.<kind>Cell, one step of kind 'RNN', 'LSTM' or 'GRU'.
local function cell_class(kind)
  local name = kind .. 'Cell'
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(input_size, hidden_size, opts)
    Module.__init(self)
    check_sizes(name, input_size, hidden_size)
    opts = opts or {}
    self.input_size, self.hidden_size, self.bias_flag = input_size, hidden_size, opts.bias ~= false
    self.nonlinearity = opts.nonlinearity or 'tanh'
    if kind == 'RNN' and self.nonlinearity ~= 'tanh' and self.nonlinearity ~= 'relu' then
      error("nn.RNNCell: nonlinearity must be 'tanh' or 'relu', got '" .. tostring(self.nonlinearity) .. "'", 3)
    end
    local g = GATES[kind]
    self.weight_ih = nn.Parameter(torch.empty(g * hidden_size, input_size, {dtype = opts.dtype}))
    self.weight_hh = nn.Parameter(torch.empty(g * hidden_size, hidden_size, {dtype = opts.dtype}))
    if self.bias_flag then
      self.bias_ih = nn.Parameter(torch.empty(g * hidden_size, {dtype = opts.dtype}))
      self.bias_hh = nn.Parameter(torch.empty(g * hidden_size, {dtype = opts.dtype}))
    end
    self:reset_parameters()
  end
  cls.reset_parameters = reset_parameters
  function cls:extra_repr()
    local s = self.input_size .. ', ' .. self.hidden_size
    if not self.bias_flag then s = s .. ', bias=false' end
    if kind == 'RNN' and self.nonlinearity ~= 'tanh' then s = s .. ", nonlinearity='" .. self.nonlinearity .. "'" end
    return s
  end
  -- cell(x, state): x (B, input_size) or (input_size); state h (or {h, c} for LSTM),
  -- zeros when nil. Returns the new h (LSTM: h, c).
  function cls:updateOutput(x, state)
    if not torch.is_tensor(x) or (x:dim() ~= 1 and x:dim() ~= 2) or x:size(-1) ~= self.input_size then
      error(string.format('nn.%s: expected input (B, %d) or (%d), got %s', name, self.input_size, self.input_size,
                          torch.is_tensor(x) and tostring(x:size()) or type(x)), 3)
    end
    local unbatched = x:dim() == 1
    if unbatched then x = x:unsqueeze(1) end
    local B = x:size(1)
    local function zeros() return (torch.zeros(B, self.hidden_size, {dtype = x.dtype})) end
    local function batch(t) return t and (unbatched and t:unsqueeze(1) or t) or zeros() end
    local out1, out2
    if kind == 'LSTM' then
      local h, c = nil, nil
      if state then h, c = state[1], state[2] end
      out1, out2 = lstm_step(x, batch(h), batch(c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
    elseif kind == 'GRU' then
      out1 = gru_step(x, batch(state), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
    else
      out1 = rnn_step(x, batch(state), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, self.nonlinearity)
    end
    if unbatched then out1 = out1:squeeze(1); out2 = out2 and out2:squeeze(1) end
    return out1, out2
  end
  return cls
end

-- ---- multi-step, multi-layer ----

-- layer_class(kind): defines nn.<kind>, kind 'RNN', 'LSTM' or 'GRU' over a sequence.
local function layer_class(kind)
  local cls, Module = torch.class('nn.' .. kind, 'nn.Module')
  function cls:__init(input_size, hidden_size, opts)
    Module.__init(self)
    check_sizes(kind, input_size, hidden_size)
    opts = opts or {}
    self.input_size, self.hidden_size = input_size, hidden_size
    self.num_layers = opts.num_layers or 1
    self.bias_flag = opts.bias ~= false
    self.batch_first = opts.batch_first or false
    self.dropout = opts.dropout or 0
    self.bidirectional = opts.bidirectional or false
    self.nonlinearity = opts.nonlinearity or 'tanh'
    if math.type(self.num_layers) ~= 'integer' or self.num_layers < 1 then
      error('nn.' .. kind .. ': num_layers must be a positive integer', 3)
    end
    if self.dropout < 0 or self.dropout > 1 then
      error(string.format('nn.%s: dropout must be in [0, 1], got %g', kind, self.dropout), 3)
    end
    local g = GATES[kind]
    local dirs = self.bidirectional and 2 or 1
    for layer = 1, self.num_layers do
      local in_size = layer == 1 and input_size or hidden_size * dirs
      for d = 1, dirs do
        local suffix = '_l' .. layer .. (d == 2 and '_reverse' or '')
        self['weight_ih' .. suffix] = nn.Parameter(torch.empty(g * hidden_size, in_size, {dtype = opts.dtype}))
        self['weight_hh' .. suffix] = nn.Parameter(torch.empty(g * hidden_size, hidden_size, {dtype = opts.dtype}))
        if self.bias_flag then
          self['bias_ih' .. suffix] = nn.Parameter(torch.empty(g * hidden_size, {dtype = opts.dtype}))
          self['bias_hh' .. suffix] = nn.Parameter(torch.empty(g * hidden_size, {dtype = opts.dtype}))
        end
      end
    end
    self:reset_parameters()
  end
  cls.reset_parameters = reset_parameters
  function cls:extra_repr()
    local s = self.input_size .. ', ' .. self.hidden_size
    if self.num_layers ~= 1 then s = s .. ', num_layers=' .. self.num_layers end
    if self.batch_first then s = s .. ', batch_first=true' end
    if self.dropout ~= 0 then s = s .. string.format(', dropout=%g', self.dropout) end
    if self.bidirectional then s = s .. ', bidirectional=true' end
    return s
  end
  -- layer(x, state): x (T, B, input_size) ((B, T, in) with batch_first, or (T, in));
  -- state h0 (num_layers * dirs, B, H) (LSTM: {h0, c0}), zeros when nil. Returns the
  -- output (T, B, dirs * H) and the final state h_n (LSTM: {h_n, c_n}).
  function cls:updateOutput(x, state)
    if not torch.is_tensor(x) or (x:dim() ~= 2 and x:dim() ~= 3) or x:size(-1) ~= self.input_size then
      error(string.format('nn.%s: expected input (T, B, %d)%s or (T, %d), got %s', kind, self.input_size,
                          self.batch_first and ' as (B, T, ...) with batch_first' or '', self.input_size,
                          torch.is_tensor(x) and tostring(x:size()) or type(x)), 3)
    end
    local unbatched = x:dim() == 2
    if unbatched then x = x:unsqueeze(2)
    elseif self.batch_first then x = x:transpose(1, 2) end
    local T, B, H = x:size(1), x:size(2), self.hidden_size
    local dirs = self.bidirectional and 2 or 1
    local h0, c0
    if state ~= nil then
      if kind == 'LSTM' then h0, c0 = state[1], state[2] else h0 = state end
      if unbatched then h0 = h0:unsqueeze(2); c0 = c0 and c0:unsqueeze(2) end
    end
    local hn, cn = {}, {}
    local layer_input = x
    for layer = 1, self.num_layers do
      local outs = {}
      for d = 1, dirs do
        local suffix = '_l' .. layer .. (d == 2 and '_reverse' or '')
        local w_ih, w_hh = self['weight_ih' .. suffix], self['weight_hh' .. suffix]
        local b_ih, b_hh = self['bias_ih' .. suffix], self['bias_hh' .. suffix]
        local k = (layer - 1) * dirs + d
        local h = h0 and h0[k] or torch.zeros(B, H, {dtype = x.dtype})
        local c = kind == 'LSTM' and (c0 and c0[k] or torch.zeros(B, H, {dtype = x.dtype})) or nil
        local steps = {}
        local first, last, step = 1, T, 1
        if d == 2 then first, last, step = T, 1, -1 end
        for t = first, last, step do
          local xt = layer_input[t]
          if kind == 'LSTM' then h, c = lstm_step(xt, h, c, w_ih, w_hh, b_ih, b_hh)
          elseif kind == 'GRU' then h = gru_step(xt, h, w_ih, w_hh, b_ih, b_hh)
          else h = rnn_step(xt, h, w_ih, w_hh, b_ih, b_hh, self.nonlinearity) end
          steps[t] = h
        end
        outs[d] = torch.stack(steps, 1)
        hn[k], cn[k] = h, c
      end
      layer_input = dirs == 2 and torch.cat(outs, 3) or outs[1]
      if self.dropout > 0 and layer < self.num_layers then
        layer_input = F.dropout(layer_input, self.dropout, self.training)
      end
    end
    local output = layer_input
    local h_n = torch.stack(hn, 1)
    local c_n = kind == 'LSTM' and torch.stack(cn, 1) or nil
    if unbatched then
      output = output:squeeze(2); h_n = h_n:squeeze(2); c_n = c_n and c_n:squeeze(2)
    elseif self.batch_first then
      output = output:transpose(1, 2)
    end
    if kind == 'LSTM' then return output, {h_n, c_n} end
    return output, h_n
  end
  return cls
end

return {cell = cell_class, layer = layer_class}
