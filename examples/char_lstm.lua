-- examples/char_lstm.lua: a character-level LSTM language model written the
-- Torch7 way: an nngraph LSTM cell, one clone of it per time step sharing the
-- parameters, truncated backpropagation through time by hand, optim.rmsprop
-- on the flattened parameters, gradient clipping, checkpoints with
-- torch.save, and sampling with a temperature.
--
--   th --torch7 examples/char_lstm.lua                       # trains on a text Debian ships
--   th --torch7 examples/char_lstm.lua -text my.txt -iters 2000 -hidden 256
--   th --torch7 examples/char_lstm.lua -resume lstm.t7 -iters 0 -sample 500 -temperature 0.5
--
-- The loss printed is the mean negative log-likelihood per character (nats);
-- a model that learnt nothing scores log(vocabulary size).
require 'nn'
require 'nngraph'
require 'optim'
if torch.dialect() ~= 'torch7' then torch.dialect('torch7') end   -- a Torch7 script

local cmd = torch.CmdLine()
cmd:text('Trains a character-level LSTM language model and samples from it.')
cmd:option('-text', '/usr/share/common-licenses/GPL-3', 'the text file to learn')
cmd:option('-hidden', 128, 'LSTM units per layer')
cmd:option('-layers', 2, 'LSTM layers')
cmd:option('-seq', 50, 'characters per truncated backpropagation')
cmd:option('-batch', 16, 'sequences per batch')
cmd:option('-iters', 400, 'training iterations')
cmd:option('-lr', 2e-3, 'rmsprop learning rate')
cmd:option('-clip', 5, 'gradients are clipped to [-clip, clip]')
cmd:option('-every', 50, 'print the loss every so many iterations')
cmd:option('-checkpoint', '', 'write a checkpoint here at the end (and every -every iterations)')
cmd:option('-resume', '', 'start from this checkpoint')
cmd:option('-sample', 300, 'characters sampled at the end')
cmd:option('-temperature', 0.8, 'sampling temperature (lower: more conservative)')
cmd:option('-prime', 'The ', 'the text sampling starts from')
cmd:option('-seed', 123, 'random seed')
local opt = cmd:parse(arg or {})
torch.manualSeed(opt.seed)
torch.setdefaulttensortype('torch.FloatTensor')

-- ---- the text, as character indices ----
local f = io.open(opt.text, 'rb')
if not f then error('char_lstm: cannot read ' .. opt.text .. ' (give a text file with -text)') end
local text = f:read('a')
f:close()

local checkpoint = opt.resume ~= '' and torch.load(opt.resume) or nil
local vocab, chars = {}, {}
if checkpoint then
  vocab, chars = checkpoint.vocab, checkpoint.chars
else
  local seen = {}
  for c in text:gmatch('.') do seen[c] = true end
  for c in pairs(seen) do chars[#chars + 1] = c end
  table.sort(chars)
  for i, c in ipairs(chars) do vocab[c] = i end
end
local V = #chars
local data = torch.LongTensor(#text)
for i = 1, #text do data[i] = vocab[text:sub(i, i)] or 1 end
print(string.format('%s: %d characters, %d distinct', opt.text, #text, V))

-- batches: the text cut into opt.batch streams read side by side, opt.seq at a time
local per_stream = math.floor((#text - 1) / opt.batch)
local streams_x = data:narrow(1, 1, opt.batch * per_stream):view(opt.batch, per_stream)
local streams_y = data:narrow(1, 2, opt.batch * per_stream):view(opt.batch, per_stream)
local position = 1
local function next_batch()
  if position + opt.seq - 1 > per_stream then position = 1 end
  local x = streams_x:narrow(2, position, opt.seq)
  local y = streams_y:narrow(2, position, opt.seq)
  position = position + opt.seq
  return x, y
end

-- ---- the model: an LSTM cell as a graph ----
-- inputs {x, c[1], h[1], ..., c[L], h[L]}; outputs {c'[1], h'[1], ..., c'[L], h'[L], log-probabilities}
local function lstm(vocab_size, hidden, layers)
  local inputs = {nn.Identity()()}
  for _ = 1, layers do
    inputs[#inputs + 1] = nn.Identity()()   -- c
    inputs[#inputs + 1] = nn.Identity()()   -- h
  end
  local outputs = {}
  local x = nn.LookupTable(vocab_size, hidden)(inputs[1])
  for l = 1, layers do
    local prev_c, prev_h = inputs[2 * l], inputs[2 * l + 1]
    local gates = nn.CAddTable()({nn.Linear(hidden, 4 * hidden)(x), nn.Linear(hidden, 4 * hidden)(prev_h)})
    local reshaped = nn.Reshape(4, hidden)(gates)
    local in_gate, forget_gate, out_gate, in_transform = nn.SplitTable(2)(reshaped):split(4)
    in_gate, forget_gate, out_gate = nn.Sigmoid()(in_gate), nn.Sigmoid()(forget_gate), nn.Sigmoid()(out_gate)
    in_transform = nn.Tanh()(in_transform)
    local next_c = nn.CAddTable()({nn.CMulTable()({forget_gate, prev_c}), nn.CMulTable()({in_gate, in_transform})})
    local next_h = nn.CMulTable()({out_gate, nn.Tanh()(next_c)})
    outputs[#outputs + 1] = next_c
    outputs[#outputs + 1] = next_h
    x = next_h
  end
  outputs[#outputs + 1] = nn.LogSoftMax()(nn.Linear(hidden, vocab_size)(x))
  return nn.gModule(inputs, outputs)
end

local rnn = checkpoint and checkpoint.rnn or lstm(V, opt.hidden, opt.layers)
local hidden, layers = checkpoint and checkpoint.hidden or opt.hidden, checkpoint and checkpoint.layers or opt.layers
local criterion = nn.ClassNLLCriterion()
local params, grad_params = rnn:getParameters()
if not checkpoint then params:uniform(-0.08, 0.08) end
print(string.format('%d layers of %d LSTM units: %d parameters', layers, hidden, params:nElement()))

-- one clone of the cell per time step, all sharing the parameters and their gradients
local clones = {}
for t = 1, opt.seq do clones[t] = rnn:clone('weight', 'bias', 'gradWeight', 'gradBias') end

local function zero_state(n)
  local s = {}
  for i = 1, 2 * layers do s[i] = torch.zeros(n, hidden) end
  return s
end
local carried = zero_state(opt.batch)          -- the state at the end of the last batch

-- the loss of one batch and its gradient (for optim)
local function feval(p)
  if p ~= params then params:copy(p) end
  grad_params:zero()
  local x, y = next_batch()
  local states, predictions, loss = {[0] = carried}, {}, 0
  for t = 1, opt.seq do
    local out = clones[t]:forward({x:select(2, t), table.unpack(states[t - 1])})
    states[t] = {}
    for i = 1, 2 * layers do states[t][i] = out[i] end
    predictions[t] = out[2 * layers + 1]
    loss = loss + criterion:forward(predictions[t], y:select(2, t))
  end
  loss = loss / opt.seq
  -- backward through time, from the last step
  local dstate = zero_state(opt.batch)
  for t = opt.seq, 1, -1 do
    local dpred = criterion:backward(predictions[t], y:select(2, t)):clone():div(opt.seq)
    local douts = {}
    for i = 1, 2 * layers do douts[i] = dstate[i] end
    douts[2 * layers + 1] = dpred
    local dinputs = clones[t]:backward({x:select(2, t), table.unpack(states[t - 1])}, douts)
    for i = 1, 2 * layers do dstate[i] = dinputs[i + 1] end
  end
  for i = 1, 2 * layers do carried[i] = states[opt.seq][i]:clone() end   -- truncated: the values go on
  grad_params:clamp(-opt.clip, opt.clip)
  return loss, grad_params
end

local function save(path, iter)
  torch.save(path, {rnn = rnn, vocab = vocab, chars = chars, hidden = hidden, layers = layers, iter = iter})
end

-- ---- training ----
local optim_state = {learningRate = opt.lr, alpha = 0.95}
local first, last
local timer = torch.Timer()
for iter = 1, opt.iters do
  local _, losses = optim.rmsprop(feval, params, optim_state)
  local loss = losses[1]
  first = first or loss
  last = loss
  if iter % opt.every == 0 or iter == opt.iters then
    print(string.format('iter %d/%d  loss %.4f  (%.2f s)', iter, opt.iters, loss, timer:time().real))
    if opt.checkpoint ~= '' then save(opt.checkpoint, iter) end
  end
end
if first then
  print(string.format('loss %.4f -> %.4f (uniform guessing: %.4f)', first, last, math.log(V)))
end

-- ---- sampling ----
if opt.sample > 0 then
  local state = zero_state(1)
  local sampled = {}
  local prev
  local function step(index)
    local out = rnn:forward({torch.LongTensor{index}, table.unpack(state)})
    for i = 1, 2 * layers do state[i] = out[i]:clone() end
    return out[2 * layers + 1]
  end
  local logp
  for c in opt.prime:gmatch('.') do
    if vocab[c] then logp = step(vocab[c]); sampled[#sampled + 1] = c end
  end
  logp = logp or step(1)
  for _ = 1, opt.sample do
    local probs = logp:float():div(opt.temperature):exp()
    probs:div(probs:sum())
    prev = torch.multinomial(probs:view(-1), 1)[1]
    sampled[#sampled + 1] = chars[prev]
    logp = step(prev)
  end
  print('sample (temperature ' .. opt.temperature .. '):')
  print(table.concat(sampled))
end
