-- The builder of Torch7's decorators (nn.Bottle, nn.Profile, nn.DontCast): a module that
-- wraps one child (registered as '1'; deco.modules[1], deco:get(1)) and passes each call on
-- to it, changing the input on the way in and the output on the way out.
--
-- Both contracts hold. deco:forward(x) runs child:forward on the changed input (the child
-- keeps its output, and its backward gives its gradInput, as Torch7's); deco:backward,
-- updateGradInput and accGradParameters call the child's. Called as deco(x) inside a
-- PyTorch-style container, on an x that requires grad, the child's forward builds on x's
-- graph (a Torch7 class through its autograd node), so autograd's backward goes through.
--
-- Decorator.class(name, hooks): the class nn.<name>; hooks (all optional, methods of the
-- instance): input(self, x) the child's input, output(self, y, x) the decorator's output
-- from the child's y, grad_output(self, g, x) the child's gradOutput, grad_input(self, gi, x)
-- the decorator's gradInput from the child's, around(self, what, fn) runs fn() ('forward'
-- or 'backward') and returns its result.
local torch = require 'torch'
local nn = require 'nn'
local list_class = require 'nn._Container'

local Module = nn.Module
local Decorator = {}

local function is_torch7_class(m) return getmetatable(m).updateGradInput ~= Module.updateGradInput end

local function requires_grad(v)
  if torch.is_tensor(v) then return v.requires_grad end
  if type(v) == 'table' and not nn.is_module(v) then
    for _, x in ipairs(v) do if requires_grad(x) then return true end end
  end
  return false
end

local function identity(_, v) return v end

function Decorator.class(name, hooks)
  local cls = list_class(name)
  local list_init = cls.__init
  local input_of, output_of = hooks.input or identity, hooks.output or identity
  local grad_output_of, grad_input_of = hooks.grad_output or identity, hooks.grad_input or identity
  local around = hooks.around or function(_, _, fn) return fn() end

  -- Decorator.init(self, module): the class's __init calls it first
  cls._decorator_init = function(self, module)
    list_init(self)
    if not nn.is_module(module) then
      error(string.format('nn.%s: expected a module to decorate, got %s', name, torch.type(module)), 4)
    end
    self:add(module)
  end

  -- deco:forward(input) / deco:updateOutput(input) / deco(input): the child's output on the
  -- changed input, changed back; kept in deco.output.
  function cls:forward(input)
    local child = rawget(self, '_items')[1]
    local x = input_of(self, input)
    local y = around(self, 'forward', function()
      if is_torch7_class(child) and torch.is_grad_enabled() and requires_grad(x) then return child(x) end
      return child:forward(x)
    end)
    self.output = output_of(self, y, input)
    return self.output
  end
  cls.updateOutput = cls.forward

  -- deco:updateGradInput(input, gradOutput): the child's gradInput, changed back
  function cls:updateGradInput(input, gradOutput)
    local child = rawget(self, '_items')[1]
    local gi = around(self, 'backward', function()
      return child:updateGradInput(input_of(self, input, true), grad_output_of(self, gradOutput, input))
    end)
    self.gradInput = grad_input_of(self, gi, input)
    return self.gradInput
  end

  -- deco:accGradParameters(input, gradOutput, scale=1): the child's
  function cls:accGradParameters(input, gradOutput, scale)
    local child = rawget(self, '_items')[1]
    around(self, 'backward', function()
      child:accGradParameters(input_of(self, input, true), grad_output_of(self, gradOutput, input), scale)
    end)
  end

  -- deco:backward(input, gradOutput, scale=1): the child's backward; returns gradInput
  function cls:backward(input, gradOutput, scale)
    local child = rawget(self, '_items')[1]
    local gi = around(self, 'backward', function()
      return child:backward(input_of(self, input, true), grad_output_of(self, gradOutput, input), scale)
    end)
    self.gradInput = grad_input_of(self, gi, input)
    return self.gradInput
  end
  return cls
end

return Decorator
