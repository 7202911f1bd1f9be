-- optim.lr_scheduler: learning-rate schedulers, as torch.optim.lr_scheduler
-- (also reachable as optim.StepLR, ...). Each sets the lr of every
-- parameter group of its optimizer: at construction (epoch 0), then at each
-- step(). They follow PyTorch's recursive forms (the lr of the previous step
-- times a factor), so an lr changed by hand between steps carries on, and
-- its closed forms when step(epoch) is given an epoch.
local torch = require 'torch'
local optim = require 'optim'

optim.lr_scheduler = optim.lr_scheduler or {}
local fail = optim._error

local function group_lrs(optimizer)
  local lrs = {}
  for i, group in ipairs(optimizer.param_groups) do lrs[i] = group.lr end
  return lrs
end

-- One value per parameter group: a number for all, or a table of them.
local function per_group(name, key, optimizer, value)
  local n = #optimizer.param_groups
  if type(value) == 'table' then
    if #value ~= n then fail('%s: expected %d values of %s (one per group), got %d', name, n, key, #value) end
    return {table.unpack(value)}
  end
  local out = {}
  for i = 1, n do out[i] = value end
  return out
end

-- The call forms of a scheduler class: positional names in PyTorch's order,
-- defaults, required names (read by optim._args: positionally, with a table,
-- or both).
local function signature(name, positional, defaults, required)
  return optim._signature('optim.lr_scheduler.' .. name, 'optimizer', positional, defaults, required)
end

local function check_optimizer(name, optimizer)
  if not torch.isTypeOf(optimizer, 'optim.Optimizer') then
    fail('%s: expects an optimizer (optim.Optimizer), got %s', name, torch.type(optimizer))
  end
end

local LRScheduler = torch.class('optim.lr_scheduler.LRScheduler')

-- LRScheduler(optimizer, last_epoch): the base. last_epoch = -1 (the
-- default) starts a schedule and records each group's initial_lr; another
-- value resumes one (the groups must hold initial_lr). Subclasses define
-- get_lr() (the recursive form) and may define closed_form_lr().
function LRScheduler:__init(optimizer, last_epoch)
  local name = self.__typename
  check_optimizer(name, optimizer)
  last_epoch = last_epoch or -1
  self.optimizer = optimizer
  for i, group in ipairs(optimizer.param_groups) do
    if last_epoch == -1 then
      if group.initial_lr == nil then group.initial_lr = group.lr end
    elseif group.initial_lr == nil then
      fail("%s: param group %d has no 'initial_lr' while resuming with last_epoch = %d; load the optimizer's state first",
           name, i, last_epoch)
    end
  end
  self.base_lrs = {}
  for i, group in ipairs(optimizer.param_groups) do self.base_lrs[i] = group.initial_lr end
  self.last_epoch = last_epoch
  self:_initial_step()
end

function LRScheduler:_initial_step()
  self._step_count = 0
  self._is_initial = true
  self:step()
  self._is_initial = false
end

-- sched:step(epoch): advances one epoch (or jumps to epoch, with the
-- closed form where the scheduler has one) and sets the groups' lr.
function LRScheduler:step(epoch)
  self._step_count = self._step_count + 1
  self:_update_lr(epoch)
end

function LRScheduler:_update_lr(epoch)
  local values
  if epoch == nil then
    self.last_epoch = self.last_epoch + 1
    values = self:get_lr()
  else
    self.last_epoch = epoch
    if self.closed_form_lr then values = self:closed_form_lr() else values = self:get_lr() end
  end
  for i, group in ipairs(self.optimizer.param_groups) do group.lr = values[i] end
  self._last_lr = group_lrs(self.optimizer)
end

-- sched:get_lr(): the lr of each group for the epoch just reached; a
-- scheduler class defines it.
function LRScheduler:get_lr()
  fail('%s: the scheduler class must define get_lr()', self.__typename)
end

-- sched:get_last_lr(): the lr of each group set by the latest step
function LRScheduler:get_last_lr()
  return {table.unpack(self._last_lr)}
end

-- Fields that a state dict leaves out: the optimizer, and functions.
local function saved_fields(self, skip)
  local sd = {}
  for k, v in pairs(self) do
    if k ~= 'optimizer' and type(v) ~= 'function' and not (skip and skip[k]) then sd[k] = optim._deep_copy(v) end
  end
  return sd
end

-- sched:state_dict(): every field but the optimizer (a plain table)
function LRScheduler:state_dict() return saved_fields(self) end

-- sched:load_state_dict(sd): restores the fields of state_dict()
function LRScheduler:load_state_dict(sd)
  for k, v in pairs(sd) do self[k] = optim._deep_copy(v) end
end

local function new_scheduler(name)
  return torch.class('optim.lr_scheduler.' .. name, 'optim.lr_scheduler.LRScheduler')
end

local LambdaLR = new_scheduler('LambdaLR')
local lambda_sig = signature('LambdaLR', {'lr_lambda', 'last_epoch'}, {last_epoch = -1}, {'lr_lambda'})
-- LambdaLR(optimizer, lr_lambda, last_epoch=-1) or LambdaLR(optimizer,
-- {lr_lambda=, last_epoch=-1}): base_lr * lr_lambda(epoch); lr_lambda is a
-- function or a table of one per group.
function LambdaLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.LambdaLR', optimizer)
  local o = optim._args(lambda_sig, ...)
  local lr_lambda = o.lr_lambda
  local n = #optimizer.param_groups
  if type(lr_lambda) == 'table' and getmetatable(lr_lambda) == nil then
    if #lr_lambda ~= n then
      fail('optim.lr_scheduler.LambdaLR: expected %d lr_lambdas (one per group), got %d', n, #lr_lambda)
    end
    self.lr_lambdas = {table.unpack(lr_lambda)}
  else
    self.lr_lambdas = {}
    for i = 1, n do self.lr_lambdas[i] = lr_lambda end
  end
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function LambdaLR:get_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.lr_lambdas[i](self.last_epoch) end
  return lrs
end
-- the lambdas are functions: the state dict keeps the rest
function LambdaLR:state_dict() return saved_fields(self, {lr_lambdas = true}) end

local StepLR = new_scheduler('StepLR')
local step_sig = signature('StepLR', {'step_size', 'gamma', 'last_epoch'}, {gamma = 0.1, last_epoch = -1}, {'step_size'})
-- StepLR(optimizer, step_size, gamma=0.1, last_epoch=-1) or
-- StepLR(optimizer, {step_size=, gamma=0.1, last_epoch=-1}) (or the
-- options after step_size in a table): lr *= gamma every step_size epochs.
function StepLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.StepLR', optimizer)
  local o, bad = optim._args(step_sig, ...)
  if math.type(o.step_size) ~= 'integer' or o.step_size < 1 then
    bad('step_size must be a positive integer, got %s', tostring(o.step_size))
  end
  if type(o.gamma) ~= 'number' then bad('gamma must be a number, got %s', torch.type(o.gamma)) end
  self.step_size, self.gamma = o.step_size, o.gamma
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function StepLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return lrs end
  for i, lr in ipairs(lrs) do lrs[i] = lr * self.gamma end
  return lrs
end
function StepLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ (self.last_epoch // self.step_size) end
  return lrs
end

local MultiStepLR = new_scheduler('MultiStepLR')
local multistep_sig = signature('MultiStepLR', {'milestones', 'gamma', 'last_epoch'}, {gamma = 0.1, last_epoch = -1},
                                {'milestones'})
-- MultiStepLR(optimizer, milestones, gamma=0.1, last_epoch=-1) or
-- MultiStepLR(optimizer, {milestones=, gamma=0.1, last_epoch=-1}): lr
-- *= gamma at each milestone epoch (a repeated milestone counts twice).
function MultiStepLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.MultiStepLR', optimizer)
  local o, bad = optim._args(multistep_sig, ...)
  if type(o.milestones) ~= 'table' then bad('milestones must be a table of epochs, got %s', torch.type(o.milestones)) end
  if type(o.gamma) ~= 'number' then bad('gamma must be a number, got %s', torch.type(o.gamma)) end
  self.milestones = {}
  for _, m in ipairs(o.milestones) do self.milestones[m] = (self.milestones[m] or 0) + 1 end
  self.gamma = o.gamma
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function MultiStepLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  local count = self.milestones[self.last_epoch]
  if not count then return lrs end
  for i, lr in ipairs(lrs) do lrs[i] = lr * self.gamma ^ count end
  return lrs
end
function MultiStepLR:closed_form_lr()
  local passed = 0
  for m, count in pairs(self.milestones) do
    if m <= self.last_epoch then passed = passed + count end
  end
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ passed end
  return lrs
end

local ConstantLR = new_scheduler('ConstantLR')
local constant_sig = signature('ConstantLR', {'factor', 'total_iters', 'last_epoch'},
                              {factor = 1 / 3, total_iters = 5, last_epoch = -1})
-- ConstantLR(optimizer, factor=1/3, total_iters=5, last_epoch=-1) or
-- ConstantLR(optimizer, {factor=, total_iters=, last_epoch=}): lr * factor
-- until total_iters epochs have passed.
function ConstantLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.ConstantLR', optimizer)
  local o, bad = optim._args(constant_sig, ...)
  self.factor, self.total_iters = o.factor, o.total_iters
  if type(self.factor) ~= 'number' or self.factor > 1 or self.factor < 0 then
    bad('factor must be in [0, 1], got %s', tostring(self.factor))
  end
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function ConstantLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  if self.last_epoch == 0 then
    for i, lr in ipairs(lrs) do lrs[i] = lr * self.factor end
  elseif self.last_epoch == self.total_iters then
    for i, lr in ipairs(lrs) do lrs[i] = lr * (1 / self.factor) end
  end
  return lrs
end
function ConstantLR:closed_form_lr()
  local lrs = {}
  local f = self.last_epoch >= self.total_iters and 1 or self.factor
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * f end
  return lrs
end

local LinearLR = new_scheduler('LinearLR')
local linear_sig = signature('LinearLR', {'start_factor', 'end_factor', 'total_iters', 'last_epoch'},
                            {start_factor = 1 / 3, end_factor = 1, total_iters = 5, last_epoch = -1})
-- LinearLR(optimizer, start_factor=1/3, end_factor=1, total_iters=5,
-- last_epoch=-1) or LinearLR(optimizer, {start_factor=, end_factor=,
-- total_iters=, last_epoch=}): the factor goes linearly from start to end
-- over total_iters epochs.
function LinearLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.LinearLR', optimizer)
  local o, bad = optim._args(linear_sig, ...)
  self.start_factor, self.end_factor, self.total_iters = o.start_factor, o.end_factor, o.total_iters
  if type(self.start_factor) ~= 'number' or self.start_factor > 1 or self.start_factor <= 0 then
    bad('start_factor must be in (0, 1], got %s', tostring(self.start_factor))
  end
  if type(self.end_factor) ~= 'number' or self.end_factor > 1 or self.end_factor < 0 then
    bad('end_factor must be in [0, 1], got %s', tostring(self.end_factor))
  end
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function LinearLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  if self.last_epoch == 0 then
    for i, lr in ipairs(lrs) do lrs[i] = lr * self.start_factor end
    return lrs
  end
  if self._is_initial or self.last_epoch > self.total_iters then return lrs end
  local delta = self.end_factor - self.start_factor
  local f = 1 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
  for i, lr in ipairs(lrs) do lrs[i] = lr * f end
  return lrs
end
function LinearLR:closed_form_lr()
  local lrs = {}
  local f = self.start_factor + (self.end_factor - self.start_factor) * math.min(self.total_iters, self.last_epoch) /
            self.total_iters
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * f end
  return lrs
end

local ExponentialLR = new_scheduler('ExponentialLR')
local exponential_sig = signature('ExponentialLR', {'gamma', 'last_epoch'}, {last_epoch = -1}, {'gamma'})
-- ExponentialLR(optimizer, gamma, last_epoch=-1) or
-- ExponentialLR(optimizer, {gamma=, last_epoch=-1}): lr *= gamma each epoch.
function ExponentialLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.ExponentialLR', optimizer)
  local o, bad = optim._args(exponential_sig, ...)
  if type(o.gamma) ~= 'number' then bad('gamma must be a number, got %s', torch.type(o.gamma)) end
  self.gamma = o.gamma
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function ExponentialLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  if self._is_initial then return lrs end
  for i, lr in ipairs(lrs) do lrs[i] = lr * self.gamma end
  return lrs
end
function ExponentialLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ self.last_epoch end
  return lrs
end

local CosineAnnealingLR = new_scheduler('CosineAnnealingLR')
local cosine_sig = signature('CosineAnnealingLR', {'T_max', 'eta_min', 'last_epoch'}, {eta_min = 0, last_epoch = -1},
                            {'T_max'})
-- CosineAnnealingLR(optimizer, T_max, eta_min=0, last_epoch=-1) or
-- CosineAnnealingLR(optimizer, {T_max=, eta_min=0, last_epoch=-1}): half a
-- cosine from base_lr down to eta_min over T_max epochs (and back up after,
-- as PyTorch).
function CosineAnnealingLR:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.CosineAnnealingLR', optimizer)
  local o, bad = optim._args(cosine_sig, ...)
  if type(o.T_max) ~= 'number' or o.T_max <= 0 then bad('T_max must be a positive number, got %s', tostring(o.T_max)) end
  if type(o.eta_min) ~= 'number' then bad('eta_min must be a number, got %s', torch.type(o.eta_min)) end
  self.T_max, self.eta_min = o.T_max, o.eta_min
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function CosineAnnealingLR:get_lr()
  local lrs = group_lrs(self.optimizer)
  local e, T, eta = self.last_epoch, self.T_max, self.eta_min
  if self._is_initial then return lrs end
  if self._step_count == 1 and e > 0 then
    for i, base in ipairs(self.base_lrs) do lrs[i] = eta + (base - eta) * (1 + math.cos(e * math.pi / T)) / 2 end
  elseif (e - 1 - T) % (2 * T) == 0 then
    for i, base in ipairs(self.base_lrs) do lrs[i] = lrs[i] + (base - eta) * (1 - math.cos(math.pi / T)) / 2 end
  else
    local ratio = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
    for i, lr in ipairs(lrs) do lrs[i] = ratio * (lr - eta) + eta end
  end
  return lrs
end
function CosineAnnealingLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
  end
  return lrs
end

local WarmRestarts = new_scheduler('CosineAnnealingWarmRestarts')
local restarts_sig = signature('CosineAnnealingWarmRestarts', {'T_0', 'T_mult', 'eta_min', 'last_epoch'},
                              {T_mult = 1, eta_min = 0, last_epoch = -1}, {'T_0'})
-- CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0,
-- last_epoch=-1) or CosineAnnealingWarmRestarts(optimizer, {T_0=, T_mult=1,
-- eta_min=0, last_epoch=-1}): cosine annealing restarted after T_0 epochs,
-- each period T_mult times the previous. step(epoch) takes fractional epochs.
function WarmRestarts:__init(optimizer, ...)
  check_optimizer('optim.lr_scheduler.CosineAnnealingWarmRestarts', optimizer)
  local o, bad = optim._args(restarts_sig, ...)
  local T_0, T_mult = o.T_0, o.T_mult
  if math.type(T_0) ~= 'integer' or T_0 <= 0 then bad('expected a positive integer T_0, got %s', tostring(T_0)) end
  if math.type(T_mult) ~= 'integer' or T_mult < 1 then bad('expected an integer T_mult >= 1, got %s', tostring(T_mult)) end
  self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, o.eta_min
  self.T_cur = o.last_epoch
  LRScheduler.__init(self, optimizer, o.last_epoch)
end
function WarmRestarts:get_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
  end
  return lrs
end
function WarmRestarts:step(epoch)
  if epoch == nil and self.last_epoch < 0 then epoch = 0 end
  if epoch == nil then
    epoch = self.last_epoch + 1
    self.T_cur = self.T_cur + 1
    if self.T_cur >= self.T_i then
      self.T_cur = self.T_cur % self.T_i
      self.T_i = self.T_i * self.T_mult
    end
  else
    if epoch < 0 then fail('optim.lr_scheduler.CosineAnnealingWarmRestarts: expected a non-negative epoch, got %s', epoch) end
    if epoch >= self.T_0 then
      if self.T_mult == 1 then
        self.T_cur = epoch % self.T_0
      else
        local n = math.floor(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1) / math.log(self.T_mult))
        self.T_cur = epoch - self.T_0 * (self.T_mult ^ n - 1) / (self.T_mult - 1)
        self.T_i = self.T_0 * self.T_mult ^ n
      end
    else
      self.T_i = self.T_0
      self.T_cur = epoch
    end
  end
  self._step_count = self._step_count + 1
  self.last_epoch = math.floor(epoch)
  local lrs = self:get_lr()
  for i, group in ipairs(self.optimizer.param_groups) do group.lr = lrs[i] end
  self._last_lr = group_lrs(self.optimizer)
end

local OneCycleLR = new_scheduler('OneCycleLR')
local onecycle_sig = signature('OneCycleLR', {'max_lr', 'total_steps', 'epochs', 'steps_per_epoch', 'pct_start',
                                              'anneal_strategy', 'cycle_momentum', 'base_momentum', 'max_momentum',
                                              'div_factor', 'final_div_factor', 'three_phase', 'last_epoch'},
                              {pct_start = 0.3, anneal_strategy = 'cos', cycle_momentum = true, base_momentum = 0.85,
                               max_momentum = 0.95, div_factor = 25, final_div_factor = 1e4, three_phase = false,
                               last_epoch = -1}, {'max_lr'})
-- OneCycleLR(optimizer, {max_lr=, total_steps= | epochs=,
-- steps_per_epoch=, pct_start=0.3, anneal_strategy='cos'|'linear',
-- cycle_momentum=true, base_momentum=0.85, max_momentum=0.95,
-- div_factor=25, final_div_factor=1e4, three_phase=false, last_epoch=-1}),
-- or those positionally in that order (OneCycleLR(optimizer, 0.1, 1000)):
-- the 1cycle policy, stepped once per batch; momentum (or beta1) cycles
-- inversely to the lr.
function OneCycleLR:__init(optimizer, ...)
  local name = 'optim.lr_scheduler.OneCycleLR'
  check_optimizer(name, optimizer)
  local opts, bad = optim._args(onecycle_sig, ...)
  local fail = function(fmt, _, ...) bad((fmt:gsub('^%%s: ', '')), ...) end   -- the checks below name the class
  local total = opts.total_steps
  if total ~= nil then
    if math.type(total) ~= 'integer' or total <= 0 then
      fail('%s: expected a positive integer total_steps, got %s', name, tostring(total))
    end
  elseif opts.epochs ~= nil and opts.steps_per_epoch ~= nil then
    if math.type(opts.epochs) ~= 'integer' or opts.epochs <= 0 then
      fail('%s: expected a positive integer epochs, got %s', name, tostring(opts.epochs))
    end
    if math.type(opts.steps_per_epoch) ~= 'integer' or opts.steps_per_epoch <= 0 then
      fail('%s: expected a positive integer steps_per_epoch, got %s', name, tostring(opts.steps_per_epoch))
    end
    total = opts.epochs * opts.steps_per_epoch
  else
    fail('%s: define either total_steps or (epochs and steps_per_epoch)', name)
  end
  self.total_steps = total
  local pct = opts.pct_start or 0.3
  if type(pct) ~= 'number' or pct < 0 or pct > 1 then fail('%s: expected pct_start in [0, 1], got %s', name, tostring(pct)) end
  local strategy = opts.anneal_strategy or 'cos'
  if strategy ~= 'cos' and strategy ~= 'linear' then
    fail("%s: anneal_strategy must be 'cos' or 'linear', got %s", name, tostring(strategy))
  end
  self.anneal_strategy = strategy
  if opts.three_phase then
    self.phases = {
      {end_step = pct * total - 1, start_lr = 'initial_lr', end_lr = 'max_lr',
       start_momentum = 'max_momentum', end_momentum = 'base_momentum'},
      {end_step = 2 * pct * total - 2, start_lr = 'max_lr', end_lr = 'initial_lr',
       start_momentum = 'base_momentum', end_momentum = 'max_momentum'},
      {end_step = total - 1, start_lr = 'initial_lr', end_lr = 'min_lr',
       start_momentum = 'max_momentum', end_momentum = 'max_momentum'},
    }
  else
    self.phases = {
      {end_step = pct * total - 1, start_lr = 'initial_lr', end_lr = 'max_lr',
       start_momentum = 'max_momentum', end_momentum = 'base_momentum'},
      {end_step = total - 1, start_lr = 'max_lr', end_lr = 'min_lr',
       start_momentum = 'base_momentum', end_momentum = 'max_momentum'},
    }
  end
  local last_epoch = opts.last_epoch or -1
  local max_lrs = per_group(name, 'max_lr', optimizer, opts.max_lr)
  local div, final_div = opts.div_factor or 25, opts.final_div_factor or 1e4
  if last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do
      group.initial_lr = max_lrs[i] / div
      group.max_lr = max_lrs[i]
      group.min_lr = group.initial_lr / final_div
    end
  end
  self.cycle_momentum = opts.cycle_momentum ~= false
  if self.cycle_momentum then
    local defaults = optimizer.defaults
    if defaults.momentum == nil and defaults.betas == nil then
      fail('%s: the optimizer must have momentum or betas for cycle_momentum (or pass cycle_momentum=false)', name)
    end
    self.use_beta1 = defaults.betas ~= nil
    local max_m = per_group(name, 'max_momentum', optimizer, opts.max_momentum or 0.95)
    local base_m = per_group(name, 'base_momentum', optimizer, opts.base_momentum or 0.85)
    if last_epoch == -1 then
      for i, group in ipairs(optimizer.param_groups) do
        if self.use_beta1 then group.betas = {max_m[i], group.betas[2]} else group.momentum = max_m[i] end
        group.max_momentum, group.base_momentum = max_m[i], base_m[i]
      end
    end
  end
  LRScheduler.__init(self, optimizer, last_epoch)
end
function OneCycleLR:anneal(from, to, pct)
  if self.anneal_strategy == 'cos' then return to + (from - to) / 2 * (math.cos(math.pi * pct) + 1) end
  return (to - from) * pct + from
end
function OneCycleLR:get_lr()
  local step = self.last_epoch
  if step > self.total_steps then
    fail('optim.lr_scheduler.OneCycleLR: tried to step %d times; total_steps is %d', step, self.total_steps)
  end
  local lrs = {}
  for gi, group in ipairs(self.optimizer.param_groups) do
    local start_step, lr, momentum = 0, nil, nil
    for i, phase in ipairs(self.phases) do
      if step <= phase.end_step or i == #self.phases then
        local pct = (step - start_step) / (phase.end_step - start_step)
        lr = self:anneal(group[phase.start_lr], group[phase.end_lr], pct)
        if self.cycle_momentum then
          momentum = self:anneal(group[phase.start_momentum], group[phase.end_momentum], pct)
        end
        break
      end
      start_step = phase.end_step
    end
    lrs[gi] = lr
    if self.cycle_momentum then
      if self.use_beta1 then group.betas = {momentum, group.betas[2]} else group.momentum = momentum end
    end
  end
  return lrs
end

local Plateau = new_scheduler('ReduceLROnPlateau')
local plateau_sig = signature('ReduceLROnPlateau', {'mode', 'factor', 'patience', 'threshold', 'threshold_mode',
                                                    'cooldown', 'min_lr', 'eps'},
                             {mode = 'min', factor = 0.1, patience = 10, threshold = 1e-4, threshold_mode = 'rel',
                              cooldown = 0, min_lr = 0, eps = 1e-8})
-- ReduceLROnPlateau(optimizer, {mode='min', factor=0.1, patience=10,
-- threshold=1e-4, threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8}),
-- or those positionally in that order: step(metric) multiplies the lr by
-- factor once the metric has not improved for more than patience epochs.
function Plateau:__init(optimizer, ...)
  local name = 'optim.lr_scheduler.ReduceLROnPlateau'
  check_optimizer(name, optimizer)
  local opts, bad = optim._args(plateau_sig, ...)
  local fail = function(fmt, _, ...) bad((fmt:gsub('^%%s: ', '')), ...) end   -- the checks below name the class
  self.factor = opts.factor
  if type(self.factor) ~= 'number' or self.factor >= 1 then
    fail('%s: factor should be < 1.0, got %s', name, tostring(self.factor))
  end
  self.optimizer = optimizer
  local min_lr = opts.min_lr or 0
  if type(min_lr) == 'table' then
    self.min_lrs = per_group(name, 'min_lr', optimizer, min_lr)
  else
    self.default_min_lr = min_lr
    self.min_lrs = per_group(name, 'min_lr', optimizer, min_lr)
  end
  self.patience, self.cooldown, self.eps = opts.patience or 10, opts.cooldown or 0, opts.eps or 1e-8
  self.last_epoch = 0
  self._last_lr = group_lrs(optimizer)
  self.mode, self.threshold, self.threshold_mode = opts.mode or 'min', opts.threshold or 1e-4, opts.threshold_mode or 'rel'
  if self.mode ~= 'min' and self.mode ~= 'max' then fail("%s: mode must be 'min' or 'max', got %s", name, tostring(self.mode)) end
  if self.threshold_mode ~= 'rel' and self.threshold_mode ~= 'abs' then
    fail("%s: threshold_mode must be 'rel' or 'abs', got %s", name, tostring(self.threshold_mode))
  end
  self.mode_worse = self.mode == 'min' and math.huge or -math.huge
  self.best, self.cooldown_counter, self.num_bad_epochs = self.mode_worse, 0, 0
end
function Plateau:is_better(a, best)
  local rel = self.threshold_mode == 'rel'
  if self.mode == 'min' then
    if rel then return a < best * (1 - self.threshold) end
    return a < best - self.threshold
  end
  if rel then return a > best * (self.threshold + 1) end
  return a > best + self.threshold
end
-- sched:step(metric): metric is a number or a one-element tensor
function Plateau:step(metric, epoch)
  local current = optim._loss_number(metric, 'optim.lr_scheduler.ReduceLROnPlateau')
  epoch = epoch or self.last_epoch + 1
  self.last_epoch = epoch
  if self:is_better(current, self.best) then
    self.best, self.num_bad_epochs = current, 0
  else
    self.num_bad_epochs = self.num_bad_epochs + 1
  end
  if self.cooldown_counter > 0 then
    self.cooldown_counter = self.cooldown_counter - 1
    self.num_bad_epochs = 0
  end
  if self.num_bad_epochs > self.patience then
    self:reduce_lr()
    self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
  end
  self._last_lr = group_lrs(self.optimizer)
end
function Plateau:reduce_lr()
  local groups = self.optimizer.param_groups
  if #groups ~= #self.min_lrs then
    if self.default_min_lr == nil then
      fail('optim.lr_scheduler.ReduceLROnPlateau: the optimizer has %d param groups, min_lr %d values', #groups,
           #self.min_lrs)
    end
    self.min_lrs = per_group('', '', self.optimizer, self.default_min_lr)
  end
  for i, group in ipairs(groups) do
    local old = group.lr
    local new = math.max(old * self.factor, self.min_lrs[i])
    if old - new > self.eps then group.lr = new end
  end
end

local SequentialLR = new_scheduler('SequentialLR')
local sequential_sig = signature('SequentialLR', {'schedulers', 'milestones', 'last_epoch'}, {last_epoch = -1},
                                {'schedulers', 'milestones'})
-- SequentialLR(optimizer, schedulers, milestones, last_epoch=-1) or
-- SequentialLR(optimizer, {schedulers=, milestones=, last_epoch=-1}):
-- runs schedulers[1] until milestones[1], then schedulers[2] (restarted at
-- its epoch 0), ... (a warmup then cosine: {LinearLR, CosineAnnealingLR}).
function SequentialLR:__init(optimizer, ...)
  local name = 'optim.lr_scheduler.SequentialLR'
  check_optimizer(name, optimizer)
  local o, bad = optim._args(sequential_sig, ...)
  local fail = function(fmt, _, ...) bad((fmt:gsub('^%%s: ', '')), ...) end   -- the checks below name the class
  local schedulers, milestones = o.schedulers, o.milestones
  if type(schedulers) ~= 'table' or #schedulers < 1 then fail('%s: expects at least one scheduler', name) end
  for i, s in ipairs(schedulers) do
    if torch.isTypeOf(s, 'optim.lr_scheduler.ReduceLROnPlateau') then
      fail('%s: does not support ReduceLROnPlateau (scheduler %d)', name, i)
    end
    if s.optimizer ~= optimizer then fail('%s: scheduler %d belongs to another optimizer', name, i) end
  end
  if type(milestones) ~= 'table' or #milestones ~= #schedulers - 1 then
    fail('%s: expects one milestone fewer than schedulers, got %d schedulers and %d milestones', name, #schedulers,
         type(milestones) == 'table' and #milestones or 0)
  end
  self._schedulers, self._milestones = schedulers, {table.unpack(milestones)}
  self.last_epoch = o.last_epoch + 1
  self.optimizer = optimizer
  for _, group in ipairs(optimizer.param_groups) do group.lr = group.initial_lr end
  self:_undo(self)
  local first = self._schedulers[self:_index(0)]
  first:_initial_step()
  self._last_lr = first:get_last_lr()
end
-- every scheduler's construction stepped once: take those steps back
function SequentialLR:_undo(s)
  if s._schedulers then
    for _, child in ipairs(s._schedulers) do self:_undo(child) end
  elseif s.last_epoch then
    s.last_epoch = s.last_epoch - 1
  end
end
-- the scheduler in charge at epoch e: one past the milestones <= e
function SequentialLR:_index(e)
  local i = 1
  while i <= #self._milestones and self._milestones[i] <= e do i = i + 1 end
  return i
end
function SequentialLR:step()
  self.last_epoch = self.last_epoch + 1
  local i = self:_index(self.last_epoch)
  local s = self._schedulers[i]
  if i > 1 and self._milestones[i - 1] == self.last_epoch then s:_update_lr(0) else s:step() end
  self._last_lr = s:get_last_lr()
end
function SequentialLR:state_dict()
  local sd = saved_fields(self, {_schedulers = true})
  sd._schedulers = {}
  for i, s in ipairs(self._schedulers) do sd._schedulers[i] = s:state_dict() end
  return sd
end
function SequentialLR:load_state_dict(sd)
  for k, v in pairs(sd) do
    if k ~= '_schedulers' then self[k] = optim._deep_copy(v) end
  end
  for i, s in ipairs(sd._schedulers or {}) do self._schedulers[i]:load_state_dict(s) end
end

-- optim.StepLR, ... as well as optim.lr_scheduler.StepLR
for _, name in ipairs({'LRScheduler', 'LambdaLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR',
                       'ExponentialLR', 'CosineAnnealingLR', 'CosineAnnealingWarmRestarts', 'OneCycleLR',
                       'ReduceLROnPlateau', 'SequentialLR'}) do
  optim[name] = optim.lr_scheduler[name]
end

return optim.lr_scheduler
