-- Documentation of torch's small utilities (src/vm/lt_util.c and the
-- class helpers of lib/torch/init.lua); the format is described in
-- lib/torch/doc/tensor.lua.
return [=[
torch.clock()
  Seconds on a monotonic wall clock, as a float (os.clock counts CPU time instead).

torch.Timer()
  A running stopwatch, as Torch7's: t:time() gives {real=, user=, sys=}, the
  seconds counted on the wall clock and of this process's CPU time in user and
  in kernel mode (all threads together). t:stop() pauses it (stopped time is
  not counted), t:resume() continues, t:reset() sets the counts to 0 (a stopped
  timer stays stopped). Each returns the timer.

torch.type(v)
  v's class name ('torch.FloatTensor', 'nn.Linear'), else Lua's type(v).

torch.typename(v)
  The class name of a tensor or torch.class object, else nil.

torch.isTypeOf(obj, class)
  true when obj is an instance of class (a name such as 'nn.Module', or the class
  table) or of a class derived from it.

torch.register_metatable(name, mt)
  Lets torch.save write tables whose metatable is mt (a plain metatable, not a
  torch.class) under name, and torch.load give them mt back.

torch.getmetatable(name)
  The class table of a torch.class name: torch.getmetatable('nn.Linear').
]=]
