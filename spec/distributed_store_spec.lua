-- distributed_store_spec.lua: the rendezvous of init_process_group{backend='nccl'}
-- (src/distributed/store.c -> build/distributed/store.so): rank 0 hands a blob to
-- the other ranks over TCP. Each case starts th processes together (one per rank,
-- each under `timeout 20`) running a script that calls store.exchange and prints
-- what it returned and how long it took; the case checks the bytes and messages
-- against what was sent and asked. The argument errors are checked in this process.
local TH = dofile('spec/support/th.lua').path()
local files = dofile('spec/support/files.lua')

-- the blobs rank 0 sends, made the same way here and in the rank script
local BLOBS = [[
local function make_blob(kind)
  if kind == 'bytes128' then              -- 128 bytes: 0, 255, then every 37th value
    local bytes = {0, 255}
    for i = 1, 126 do bytes[#bytes + 1] = i * 37 % 256 end
    return string.char(table.unpack(bytes))
  elseif kind == 'mib' then               -- the largest blob, 1 MiB of a linear congruential sequence
    local chunks, state = {}, 12345
    for c = 1, 1024 do
      local bytes = {}
      for i = 1, 1024 do
        state = (state * 1103515245 + 12345) % 2147483648
        bytes[i] = state >> 16 & 255
      end
      chunks[c] = string.char(table.unpack(bytes))
    end
    return table.concat(chunks)
  elseif kind == 'empty' then
    return ''
  end
  return nil
end
]]

-- a rank: args tag host port rank world timeout blob delay (blob: a kind of
-- make_blob, which rank 0 sends; '-': none). Prints
-- "RESULT tag seconds ok hex" or "RESULT tag seconds err message" (for the 1 MiB
-- blob, "ok same" or "ok differs" instead of the hex)
local RANK_SCRIPT = BLOBS .. [[
local store = assert(package.loadlib(assert(package.searchpath('distributed.store', package.cpath)),
  'luaopen_distributed_store'))()
local tag, host, port, rank, world, timeout, kind, delay = table.unpack(arg)
port, rank, world, timeout, delay = tonumber(port), tonumber(rank), tonumber(world), tonumber(timeout), tonumber(delay)
if delay > 0 then os.execute('sleep ' .. delay) end
local blob = rank == 0 and make_blob(kind) or nil
local timer = torch.Timer()
local got, err = store.exchange(host, port, rank, world, blob, timeout)
local seconds = timer:time().real
local shown
if got and kind == 'mib' then
  shown = got == make_blob('mib') and 'same' or 'differs'
elseif got then
  shown = got:gsub('.', function(c) return ('%02x'):format(c:byte()) end)
end
print(('RESULT %s %.3f %s %s'):format(tag, seconds, got and 'ok' or 'err', shown or err))
]]

-- the open files of a rank before, between and after exchanges that work and
-- that fail: "FDS rank before middle after". Port p: the exchange that works;
-- p + 1: rank 0 waits for world 2 and rank 1 arrives with world 3; p + 2:
-- nobody listens (rank 1); p + 3: rank 0 waits alone.
local FDS_SCRIPT = [[
local store = assert(package.loadlib(assert(package.searchpath('distributed.store', package.cpath)),
  'luaopen_distributed_store'))()
local lfs = require 'lfs'
local port, rank = tonumber(arg[1]), tonumber(arg[2])
local function open_files()
  local count = 0
  for name in lfs.dir('/proc/self/fd') do
    if name ~= '.' and name ~= '..' then count = count + 1 end
  end
  return count
end
local blob = rank == 0 and 'id' or nil
local before = open_files()
local got, err = store.exchange('127.0.0.1', port, rank, 2, blob, 5)
assert(got == 'id', err)
local middle = open_files()
local failures = {}
if rank == 0 then
  failures[1] = select(2, store.exchange('127.0.0.1', port + 1, 0, 2, blob, 5))
  failures[2] = select(2, store.exchange('127.0.0.1', port + 3, 0, 2, blob, 0.3))
else
  failures[1] = select(2, store.exchange('127.0.0.1', port + 1, 1, 3, nil, 5))
  failures[2] = select(2, store.exchange('127.0.0.1', port + 2, 1, 2, nil, 0.3))
end
for i = 1, 2 do print('FAILED ' .. rank .. ' ' .. tostring(failures[i])) end
print(('FDS %d %d %d %d'):format(rank, before, middle, open_files()))
]]

local rank_script = os.tmpname()
files.write(rank_script, RANK_SCRIPT)
local fds_script = os.tmpname()
files.write(fds_script, FDS_SCRIPT)
local make_blob = load(BLOBS .. 'return make_blob')()

local function hex(bytes)
  return (bytes:gsub('.', function(c) return ('%02x'):format(c:byte()) end))
end

-- ports below Linux's ephemeral range (32768-60999), so no outgoing connection
-- holds them; a different start each run, and a fresh one for each group
local next_port = 20000 + os.time() * 7919 % 10000
local function fresh_ports(count)
  local port = next_port
  next_port = next_port + count
  return port
end

-- runs shell commands together, each under `timeout 20`; returns their joined output
local function run_together(commands)
  local parts = {}
  for i, command in ipairs(commands) do parts[i] = 'timeout 20 ' .. command .. ' &' end
  local p = io.popen('(' .. table.concat(parts, ' ') .. ' wait) 2>&1', 'r')
  local out = p:read('a')
  p:close()
  return out
end

-- runs the ranks (a list of {host, rank, world, timeout, blob, delay}, host
-- '127.0.0.1' unless given) at one port, plus extra shell commands (given the
-- port); a port another program holds is swapped for the next. Returns the
-- results by position in ranks ({ok, value, seconds}), the output, the port.
local function run_ranks(ranks, extra)
  for _ = 1, 5 do
    local port = fresh_ports(1)
    local commands = {}
    for i, r in ipairs(ranks) do
      commands[i] = ('%s %s %d %s %d %d %d %s %s %s'):format(TH, rank_script, i, r.host or '127.0.0.1', port, r.rank,
        r.world, r.timeout, r.blob or '-', r.delay or 0)
    end
    if extra then commands[#commands + 1] = extra(port) end
    local out = run_together(commands)
    local results = {}
    for tag, seconds, status, value in out:gmatch('RESULT (%d+) (%S+) (%a+) ([^\n]*)') do
      results[tonumber(tag)] = {ok = status == 'ok', value = value, seconds = tonumber(seconds)}
    end
    local busy = false
    for i = 1, #ranks do
      busy = busy or (results[i] and results[i].value:find('cannot listen on port %d+: Address already in use')
        and not ranks[i].expect_busy)
    end
    if not busy then
      for i = 1, #ranks do
        assert(results[i], ('rank process %d did not report; the run printed:\n%s'):format(i, out))
      end
      return results, out, port
    end
  end
  error('five ports in a row were in use')
end

local PREFIX = 'distributed.init_process_group (rank %d of %d): '

describe('distributed.store.exchange (the rendezvous of the nccl backend)', function()
  teardown(function()
    os.remove(rank_script)
    os.remove(fds_script)
  end)

  it('hands rank 0 blob (every byte value kind, 0 and 255 included) to all 3 ranks', function()
    local sent = hex(make_blob('bytes128'))
    assert.are.equal(256, #sent)
    local results = run_ranks({
      {rank = 0, world = 3, timeout = 10, blob = 'bytes128'},
      {rank = 1, world = 3, timeout = 10, host = 'localhost'},
      {rank = 2, world = 3, timeout = 10},
    })
    for i = 1, 3 do
      assert.is_true(results[i].ok, results[i].value)
      assert.are.equal(sent, results[i].value)
    end
  end)

  it('hands out the largest blob (1 MiB) and an empty one', function()
    local results = run_ranks({
      {rank = 0, world = 2, timeout = 10, blob = 'mib'},
      {rank = 1, world = 2, timeout = 10, blob = 'mib'},   -- rank 1 compares what it got with it
    })
    assert.are.same({true, 'same'}, {results[1].ok, results[1].value})
    assert.are.same({true, 'same'}, {results[2].ok, results[2].value})
    results = run_ranks({
      {rank = 0, world = 2, timeout = 10, blob = 'empty'},
      {rank = 1, world = 2, timeout = 10},
    })
    assert.are.same({true, ''}, {results[1].ok, results[1].value})
    assert.are.same({true, ''}, {results[2].ok, results[2].value})
  end)

  it('works when the other ranks start before the master', function()
    local results = run_ranks({
      {rank = 1, world = 3, timeout = 10},
      {rank = 2, world = 3, timeout = 10},
      {rank = 0, world = 3, timeout = 10, blob = 'bytes128', delay = 0.5},
    })
    for i = 1, 3 do assert.are.equal(hex(make_blob('bytes128')), results[i].value) end
    -- the clients waited for the master: they returned after it started
    assert.is_true(results[1].seconds >= 0.4, results[1].seconds)
    assert.is_true(results[2].seconds >= 0.4, results[2].seconds)
  end)

  it('is a barrier: the master returns only once the last rank arrived', function()
    local results = run_ranks({
      {rank = 0, world = 2, timeout = 10, blob = 'bytes128'},
      {rank = 1, world = 2, timeout = 10, delay = 0.6},
    })
    assert.are.equal(hex(make_blob('bytes128')), results[1].value)
    assert.are.equal(hex(make_blob('bytes128')), results[2].value)
    assert.is_true(results[1].seconds >= 0.5, results[1].seconds)
  end)

  it('returns at once in a world of 1, without listening (the port may be taken)', function()
    local results = run_ranks({
      {rank = 0, world = 2, timeout = 1, blob = 'bytes128'},
      {rank = 0, world = 1, timeout = 10, blob = 'bytes128', delay = 0.3},
    })
    assert.is_false(results[1].ok)
    assert.is_true(results[2].ok, results[2].value)
    assert.are.equal(hex(make_blob('bytes128')), results[2].value)
  end)

  it('the master times out naming the port and the missing rank', function()
    local results, _, port = run_ranks({{rank = 0, world = 2, timeout = 1, blob = 'bytes128'}})
    assert.is_false(results[1].ok)
    assert.are.equal(PREFIX:format(0, 2) .. ('timed out after 1 s waiting for the other ranks at port %d: ' ..
      '1 of 2 ranks arrived (rank 0); missing: rank 1'):format(port), results[1].value)
    -- waited for the timeout, and not much longer (no hang)
    assert.is_true(results[1].seconds >= 0.9 and results[1].seconds < 10, results[1].seconds)
  end)

  it('the master lists the ranks that arrived and those missing as ranges', function()
    local results, _, port = run_ranks({
      {rank = 0, world = 6, timeout = 1.5, blob = 'bytes128'},
      {rank = 2, world = 6, timeout = 5},
      {rank = 3, world = 6, timeout = 5},
    })
    assert.are.equal(PREFIX:format(0, 6) .. ('timed out after 1.5 s waiting for the other ranks at port %d: ' ..
      '3 of 6 ranks arrived (ranks 0, 2-3); missing: ranks 1, 4-5'):format(port), results[1].value)
    -- the ranks that were there hear why at once, not at their own timeout
    for i = 2, 3 do
      assert.is_false(results[i].ok)
      assert.matches('the master %(rank 0%) at 127%.0%.0%.1:' .. port .. ' gave up: timed out after 1%.5 s',
        results[i].value)
      assert.is_true(results[i].seconds < 4.5, results[i].seconds)   -- before their own timeout of 5 s
    end
  end)

  it('a rank with no master times out connecting, with the last error', function()
    local results, _, port = run_ranks({{rank = 1, world = 2, timeout = 1}})
    assert.is_false(results[1].ok)
    assert.are.equal(PREFIX:format(1, 2) .. ('timed out after 1 s connecting to the master (rank 0) at ' ..
      '127.0.0.1:%d: Connection refused'):format(port), results[1].value)
    assert.is_true(results[1].seconds >= 0.9 and results[1].seconds < 10, results[1].seconds)
  end)

  it('a host name that does not resolve is named', function()
    local results = run_ranks({{rank = 1, world = 2, timeout = 1, host = 'no-such-host.invalid'}})
    assert.is_false(results[1].ok)
    assert.matches(PREFIX:format(1, 2):gsub('%p', '%%%0') .. '.*resolv.*no%-such%-host%.invalid', results[1].value)
    assert.is_true(results[1].seconds < 15, results[1].seconds)
  end)

  it('a second master on the same port says the port is in use', function()
    local results, _, port = run_ranks({
      {rank = 0, world = 2, timeout = 1.5, blob = 'bytes128'},
      {rank = 0, world = 2, timeout = 1, blob = 'bytes128', delay = 0.3, expect_busy = true},
    })
    assert.are.equal(PREFIX:format(0, 2) .. ('cannot listen on port %d: Address already in use'):format(port),
      results[2].value)
    assert.is_true(results[2].seconds < 0.9, results[2].seconds)   -- at once, not at its timeout of 1 s
    assert.matches('1 of 2 ranks arrived', results[1].value)
  end)

  it('ranks that disagree on the world size both fail at once, saying so', function()
    local results, _, port = run_ranks({
      {rank = 0, world = 2, timeout = 5, blob = 'bytes128'},
      {rank = 1, world = 3, timeout = 5},
    })
    assert.is_false(results[1].ok)
    assert.matches('^' .. PREFIX:format(0, 2):gsub('%p', '%%%0') .. 'rank 1 connected from 127%.0%.0%.1:%d+ ' ..
      'with world size 3, but rank 0 has world size 2: every rank must pass the same world size$', results[1].value)
    assert.is_false(results[2].ok)
    assert.matches('^' .. PREFIX:format(1, 3):gsub('%p', '%%%0') .. 'the master %(rank 0%) at 127%.0%.0%.1:' .. port ..
      ' refused this rank: rank 1 connected from [%d.:]+ with world size 3, but rank 0 has world size 2',
      results[2].value)
    assert.is_true(results[1].seconds < 4.5 and results[2].seconds < 4.5)   -- before their timeouts of 5 s
  end)

  it('two processes with the same rank fail, saying so', function()
    local results = run_ranks({
      {rank = 0, world = 3, timeout = 5, blob = 'bytes128'},
      {rank = 1, world = 3, timeout = 5},
      {rank = 1, world = 3, timeout = 5},
    })
    assert.matches('rank 1 connected twice, from 127%.0%.0%.1:%d+ and from 127%.0%.0%.1:%d+: two processes ' ..
      'were given the same rank$', results[1].value)
    local refused, gave_up = 0, 0
    for i = 2, 3 do
      assert.is_false(results[i].ok)
      assert.matches('rank 1 connected twice', results[i].value)
      if results[i].value:find('refused this rank', 1, true) then refused = refused + 1 end
      if results[i].value:find('gave up', 1, true) then gave_up = gave_up + 1 end
    end
    assert.are.same({1, 1}, {refused, gave_up})
  end)

  it('a stray connection (wrong magic) is refused and the ranks still meet', function()
    local results, out = run_ranks({
      {rank = 0, world = 2, timeout = 5, blob = 'bytes128'},
      {rank = 1, world = 2, timeout = 5, delay = 0.6},
    }, function(port)
      return ("bash -c 'sleep 0.2; exec 3<>/dev/tcp/127.0.0.1/%d; printf GARBAGE_BYTE >&3; " ..
        "echo STRAY $(tr -c \"[:print:]\" . <&3)'"):format(port)
    end)
    assert.are.equal(hex(make_blob('bytes128')), results[1].value)
    assert.are.equal(hex(make_blob('bytes128')), results[2].value)
    assert.matches('STRAY [^\n]*sent magic number 0x47415242, not 0x4d545256', out)
  end)

  it('checks its arguments', function()
    local so = TH:gsub('th$', 'distributed/store.so')
    local store = assert(package.loadlib(so, 'luaopen_distributed_store'))()
    local function message(...)
      local ok, err = pcall(store.exchange, ...)
      assert.is_false(ok)
      return err
    end
    local cases = {
      {{'h', 0, 0, 2, 'x', 1}, 'bad argument #2 .*port must be 1 to 65535, got 0'},
      {{'h', 65536, 0, 2, 'x', 1}, 'bad argument #2 .*got 65536'},
      {{'h', 29500, 2, 2, 'x', 1}, 'bad argument #3 .*rank must be 0 to 1 %(world size 2%), got 2'},
      {{'h', 29500, -1, 2, 'x', 1}, 'bad argument #3 .*got %-1'},
      {{'h', 29500, 0, 0, 'x', 1}, 'bad argument #4 .*world size must be 1 to 65536, got 0'},
      {{'h', 29500, 0, 2, nil, 1}, 'bad argument #5 .*rank 0 hands out the blob: a string expected, got nil'},
      {{'h', 29500, 0, 2, ('x'):rep(1048577), 1},
        'bad argument #5 .*the blob is 1048577 bytes, more than the limit of 1048576'},
      {{'h', 29500, 1, 2, 'x', 1}, 'bad argument #5 .*only rank 0 passes the blob, this is rank 1: pass nil'},
      {{nil, 29500, 1, 2, nil, 1}, 'bad argument #1 .*string expected, got nil'},
      {{'h', 29500, 0, 2, 'x', 0}, 'bad argument #6 .*timeout_s must be more than 0 and at most 1e%+07 seconds, got 0'},
      {{'h', 29500, 0, 2, 'x', -1}, 'bad argument #6 .*got %-1'},
      {{'h', 29500, 0, 2, 'x', 0 / 0}, 'bad argument #6 .*timeout_s must be'},
      {{'h', 29500, 0, 2, 'x', nil}, 'bad argument #6 .*number expected'},
    }
    for _, case in ipairs(cases) do
      assert.matches(case[2], message(table.unpack(case[1], 1, 6)))
    end
    -- world 1 needs no port: it is the blob at once
    assert.are.equal('\0\255', store.exchange(nil, 29500, 0, 1, '\0\255', 1))
  end)

  it('leaves no file open after exchanges that work and that fail', function()
    local port = fresh_ports(4)
    local out = run_together({
      ('%s %s %d 0'):format(TH, fds_script, port),
      ('%s %s %d 1'):format(TH, fds_script, port),
    })
    for rank = 0, 1 do
      local before, middle, after = out:match('FDS ' .. rank .. ' (%d+) (%d+) (%d+)')
      assert(before, out)
      assert.are.same({before, before}, {middle, after})
    end
    -- the failures were the ones meant
    assert.matches('FAILED 0 [^\n]*rank 1 connected from [^\n]* with world size 3', out)
    assert.matches('FAILED 1 [^\n]*refused this rank: rank 1 connected from [^\n]* with world size 3', out)
    assert.matches('FAILED 0 [^\n]*1 of 2 ranks arrived %(rank 0%); missing: rank 1', out)
    assert.matches('FAILED 1 [^\n]*connecting to the master %(rank 0%) at 127%.0%.0%.1:' .. port + 2 ..
      ': Connection refused', out)
  end)
end)
