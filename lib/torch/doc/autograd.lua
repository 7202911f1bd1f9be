-- Documentation of autograd from Lua (src/vm/lt_autograd.c, lib/torch/init.lua);
-- the format is described in lib/torch/doc/tensor.lua. Gradcheck, graph and
-- trace are documented beside their Lua definitions.
return [=[
x.requires_grad, x.grad, x.grad_fn, x.is_leaf, x.retains_grad, x.data
  Autograd fields of a tensor: whether ops on it are recorded (settable); the
  gradient backward accumulated (a leaf's, or a retained one; settable, nil
  before); the node that made it (nil for leaves); whether it is a leaf; whether
  retain_grad was called; x's values without history (sharing its storage).

x:requires_grad_(flag)
  Starts (flag true, the default) or stops recording ops on the leaf x; floating
  dtypes only. Returns x. Same as x.requires_grad = flag.

x:backward(), x:backward(grad), x:backward(grad, {retain_graph=, create_graph=, trace=})
  Computes the gradient of x with respect to the leaves it depends on and adds
  it to their .grad; grad (the seed, x's shape) may be left out for a
  one-element x. retain_graph keeps the graph for another backward,
  create_graph records the backward itself (higher derivatives), trace=true
  prints each node as it runs (torch.autograd.trace).

torch.autograd.backward(tensors, grad_tensors, {retain_graph=, create_graph=})
  backward from several roots at once: tensors a tensor or a list, grad_tensors
  their seeds (nil entries for one-element roots); also as {grad_tensors=}.

torch.autograd.grad(outputs, inputs, {grad_outputs=, retain_graph=, create_graph=, allow_unused=})
  The gradients of outputs with respect to inputs (tensors or lists), returned as
  a list, one per input, without touching .grad; allow_unused gives nil for an
  input the outputs do not depend on instead of an error.

torch.detach(x), x:detach()
  A tensor sharing x's storage, without history and not requiring grad.

x:detach_()
  Cuts x from its history in place: x becomes a leaf that does not require grad.

x:retain_grad()
  Makes backward also fill x.grad for the non-leaf x.

x:register_hook(fn)
  fn(grad) runs when x's gradient is computed, and may return a replacement
  gradient (same shape and dtype; anything but a tensor or nil raises).
  Returns a handle: h:remove() takes the hook away.

x:register_post_accumulate_grad_hook(fn)
  fn(x) runs after a backward accumulated into the leaf x's .grad. Returns a handle
  with h:remove().

torch.is_grad_enabled()
  true when ops on tensors that require grad are recorded (the default).

torch.set_grad_enabled(flag), torch.autograd.set_grad_enabled(flag)
  Turns recording on or off for what follows, and returns a guard that puts the
  previous mode back when closed: local g <close> = torch.set_grad_enabled(false)
  turns it off until the end of the block (also when an error leaves it), as
  PyTorch's `with torch.set_grad_enabled(False):`.

torch.no_grad(fn, ...), torch.no_grad(), torch.autograd.no_grad(fn, ...)
  Runs fn(...) with recording off and returns its results; the previous mode
  comes back even when fn raises. With no argument, turns recording off and
  returns a guard for a block (Lua 5.4's to-be-closed variable), PyTorch's
  `with torch.no_grad():`:
    do
      local g <close> = torch.no_grad()
      ...            -- recording off here
    end              -- the previous mode is back (also after an error)
  g:close() ends it early. A guard not held in a <close> variable leaves the mode
  off until it is closed. fn may be any callable (a module).

torch.enable_grad(fn, ...), torch.enable_grad(), torch.autograd.enable_grad(fn, ...)
  Runs fn(...) with recording on (inside no_grad) and returns its results; with
  no argument, a guard as torch.no_grad()'s: local g <close> = torch.enable_grad().

torch.inference_mode(fn, ...), torch.inference_mode(false, fn, ...), torch.inference_mode(), torch.autograd.inference_mode(fn, ...)
  Runs fn(...) with recording off and torch.is_inference_mode_enabled() true; with
  false first, outside it. The mode is restored on error. With no function, a
  guard for a block: local g <close> = torch.inference_mode() (or
  inference_mode(false)).

torch.is_inference_mode_enabled()
  true inside torch.inference_mode.

torch.autograd.set_detect_anomaly(flag), torch.autograd.is_anomaly_enabled()
  Anomaly mode: a NaN produced in backward raises an error naming the forward op
  (and its file:line) that made the node.

torch.autograd.detect_anomaly(fn, ...), torch.autograd.detect_anomaly()
  Runs fn(...) with anomaly mode on, restoring it afterwards (even on error); with
  no argument, a guard for a block: local g <close> = torch.autograd.detect_anomaly().

torch.autograd.Function(name)
  A custom differentiable function: local F = torch.autograd.Function('Exp'),
  or Function:extend(name), or torch.class('Exp', 'torch.autograd.Function');
  define F.forward(ctx, ...) and F.backward(ctx, grad, ...) (one gradient per
  forward argument, nil where none) and call F.apply(...). In forward,
  ctx:save_for_backward(...) keeps tensors for ctx.saved_tensors,
  ctx:mark_dirty(x) declares an in-place change, ctx:mark_non_differentiable(y).

torch.utils.checkpoint(fn, ...), torch.checkpoint(fn, ...)
  Runs fn(...) without keeping its intermediate values; backward runs fn again
  (with the same random state) to get them. Trades compute for memory. fn may
  be a module (checkpoint(block, x)); called so, modules keep no output.
]=]
