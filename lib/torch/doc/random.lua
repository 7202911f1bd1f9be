-- Documentation of random numbers (src/vm/lt_random.c: Philox 4x32-10; the
-- same seed gives the same numbers whatever the thread count); the format is
-- described in lib/torch/doc/tensor.lua. Every sampler takes {generator=g}.
return [=[
torch.manual_seed(n)
  Seeds the default generator with the integer n; returns torch.default_generator.

torch.seed()
  Seeds the default generator from a non-deterministic source; returns the seed.

torch.initial_seed()
  The seed the default generator was last seeded with.

torch.get_rng_state(), torch.set_rng_state(state)
  The default generator's state as a uint8 tensor (16 bytes: seed, then offset),
  and setting it back: the numbers that followed get_rng_state come again.

torch.Generator(), torch.Generator('cpu')
  A generator with its own state (seed 67280421310721), for {generator=g}:
  g:manual_seed(n), g:seed(), g:initial_seed(), g:get_state(), g:set_state(s).

torch.rand(sizes..., {dtype=, generator=, requires_grad=})
  Uniform samples on [0, 1), default float dtype.

torch.randn(sizes..., {dtype=, generator=, requires_grad=})
  Standard normal samples (mean 0, std 1), default float dtype.

torch.rand_like(x, {dtype=}), torch.randn_like(x, {dtype=})
  rand or randn with x's shape and dtype.

torch.randint(high, size, {dtype=, generator=}), torch.randint(low, high, size)
  Integers on [low, high) (low 0 by default), int64; size is a table: {3, 4}.

torch.randint_like(x, high), torch.randint_like(x, low, high)
  randint with x's shape and dtype.

torch.randperm(n, {dtype=, generator=})
  A random permutation of 1..n (int64).

torch.bernoulli(p), torch.bernoulli(x, p), x:bernoulli(), x:bernoulli(p)
  0 or 1 draws, 1 with probability p: p a float tensor of probabilities (its shape
  and dtype), or a number with x's shape and dtype.

torch.multinomial(probs, n, replacement), probs:multinomial(n, {replacement=false})
  n 1-based category indices drawn with weights probs (1-D, or one row per
  draw set for 2-D); without replacement n may not exceed the categories.

torch.normal(mean, std), torch.normal(mean, std, sizes..., {dtype=})
  Normal samples: mean and std tensors or numbers (broadcast); with numbers and
  sizes, a tensor of those sizes; two numbers alone give one Lua number (Torch7).

torch.uniform(a, b)
  One Lua number uniform on [a, b) (default [0, 1)), as Torch7.

x:uniform_(a, b)
  Fills x with uniform samples on [a, b) (default [0, 1)); returns x.

x:normal_(mean, std)
  Fills x with normal samples (default mean 0, std 1); returns x.

x:random_(), x:random_(to), x:random_(from, to)
  Fills x with integers on [from, to) (from 0), as PyTorch; with no bound, every
  integer the dtype holds exactly from 0 up.

x:bernoulli_(p)
  Fills x with 0/1 draws, 1 with probability p (a number, default 0.5, or a tensor).

x:exponential_(lambda)
  Fills x with exponential samples of rate lambda (default 1).

x:geometric_(p)
  Fills x with geometric samples: the 1-based number of trials to the first
  success of probability p.

x:cauchy_(median, sigma)
  Fills x with Cauchy samples (default median 0, sigma 1).

x:log_normal_(mean, std)
  Fills x with exp of normal(mean, std) samples (default 1, 2).
]=]
