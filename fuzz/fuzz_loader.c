/* fuzz_loader.c: a libFuzzer target for one of moontorch's file loaders,
   chosen at build time: FUZZ_LOADER "t7" (torch.deserialize) or "safetensors". */
#include <stddef.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef FUZZ_LOADER
#error "build with -DFUZZ_LOADER='\"t7\"' or '\"safetensors\"'"
#endif
#ifndef FUZZ_LIB
#error "build with -DFUZZ_LIB='\"/path/to/moontorch/lib\"'"
#endif

/* Inputs between full collections: the loaders allocate tensors whose C
   memory the collector only partly sees; this keeps the fuzzer's RSS flat. */
#define FUZZ_GC_EVERY 256

/* Lua line transitions hashed into this many counters (a power of two). */
#define FUZZ_LUA_EDGES (1 << 16)

int luaopen_torch_core(lua_State *L);

/* The loaders are mostly Lua, which the compiler's coverage instrumentation
   cannot see: a line hook hashes each (file, line) transition into counters
   that libFuzzer reads, and clears per input, as extra coverage. */
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t lua_edges[FUZZ_LUA_EDGES];
static uintptr_t previous_line;

static void line_hook(lua_State *L, lua_Debug *ar) {
  if (!lua_getinfo(L, "S", ar)) return;
  uintptr_t here = (uintptr_t)ar->source * 2654435761u ^ (uintptr_t)ar->currentline * 40503u;
  lua_edges[(here ^ previous_line) % FUZZ_LUA_EDGES]++;
  previous_line = here >> 1;
}

/* A loader may refuse an input, but only with its own error; any other
   error is a finding, as a crash is. Whatever loads must also save and load
   again (the writers run on strange values too); safetensors must come back
   with the same bytes, which reads every tensor in full. A t7 input is the
   body of a file, sealed here with its CRC-32: mutations would otherwise
   stop at the checksum. A safetensors input is a whole file, or, when it
   starts with '{', a header, a NUL byte and the data, the length prefix
   written here: a mutation of the JSON then keeps the file consistent. */
static const char driver[] =
  "local loader, bytes, path = ...\n"
  "local function own(err, prefix)\n"
  "  if not tostring(err):find('^' .. prefix:gsub('%p', '%%%0')) then error(err, 0) end\n"
  "end\n"
  "if loader == 't7' then\n"
  "  local ok, v = pcall(torch.deserialize, bytes .. string.pack('<I4', torch._crc32(bytes)))\n"
  "  if not ok then return own(v, 'torch.load: ') end\n"
  "  local saved, again = pcall(torch.serialize, v)\n"
  "  if not saved then return own(again, 'torch.save: ') end\n"
  "  torch.deserialize(again)\n"
  "  return\n"
  "end\n"
  "local cut = bytes:sub(1, 1) == '{' and bytes:find('\\0', 1, true)\n"
  "if cut then bytes = string.pack('<I8', cut - 1) .. bytes:sub(1, cut - 1) .. bytes:sub(cut + 1) end\n"
  "local f = assert(io.open(path, 'wb'))\n"
  "f:write(bytes)\n"
  "f:close()\n"
  "for _, mmap in ipairs({false, true}) do\n"
  "  local ok, t, metadata = pcall(torch.load_safetensors, path, {mmap = mmap})\n"
  "  if not ok then own(t, 'torch.load_safetensors: ') else\n"
  "    torch.save_safetensors(path .. '.2', t, metadata)\n"
  "    local back = torch.load_safetensors(path .. '.2')\n"
  "    for name, x in pairs(t) do\n"
  "      if torch._tensor_bytes(x) ~= torch._tensor_bytes(back[name]) then\n"
  "        error('a round trip changed ' .. name, 0)\n"
  "      end\n"
  "    end\n"
  "  end\n"
  "end\n";

static lua_State *L;
static char path[256];
static long runs;

static void remove_files(void) {
  char second[300];
  snprintf(second, sizeof second, "%s.2", path);
  unlink(path);
  unlink(second);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_torch_core);
  lua_setfield(L, -2, "torch.core");
  lua_pop(L, 1);
  lua_pushstring(L, FUZZ_LIB "/?.lua;" FUZZ_LIB "/?/init.lua");
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  /* nn and optim up front: files name their classes */
  if (luaL_dostring(L, "require 'torch'; require 'nn'; require 'optim'") != LUA_OK ||
      luaL_loadbuffer(L, driver, sizeof driver - 1, "=fuzz_driver") != LUA_OK) {
    fprintf(stderr, "fuzz: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz_driver");
  lua_sethook(L, line_hook, LUA_MASKLINE, 0);
  const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  snprintf(path, sizeof path, "%s/moontorch-fuzz-%d.safetensors", dir, (int)getpid());
  atexit(remove_files);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz_driver");
  lua_pushstring(L, FUZZ_LOADER);
  lua_pushlstring(L, (const char *)data, size);
  lua_pushstring(L, path);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    fprintf(stderr, "fuzz (%s): %s\n", FUZZ_LOADER, lua_tostring(L, -1));
    abort();
  }
  if (++runs % FUZZ_GC_EVERY == 0) lua_gc(L, LUA_GCCOLLECT);
  return 0;
}
