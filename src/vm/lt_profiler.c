/* lt_profiler.c: the C half of torch.profiler (lib/torch/profiler.lua):
   starting and stopping the recorder (src/ops/profiler.h), Lua's named
   ranges, the Lua call site of each event, and the events read back. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lt.h"
#include "../ops/profiler.h"

/* Call sites remembered by (source, line): a direct-mapped cache in front of
   the name table, so a loop's op pays a few compares rather than a format. */
#define SITE_CACHE 1024

static lua_State *site_L;          /* the Lua thread that started the session */
static int site_ref = LUA_NOREF;   /* keeps it alive while the session lasts */
static char lib_prefix[512];       /* "@" and the libraries' folder: frames there are skipped */
static size_t lib_prefix_len;
static struct { const char *source; int line; int32_t id; } site_cache[SITE_CACHE];

/* the innermost Lua frame outside the libraries, as a name id "file:line" */
static int32_t lua_site(void) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(site_L, level, &ar); level++) {
    if (!lua_getinfo(site_L, "Sl", &ar) || ar.currentline <= 0 || ar.source[0] != '@') continue;
    if (lib_prefix_len && !strncmp(ar.source, lib_prefix, lib_prefix_len)) continue;
    const size_t slot = (((uintptr_t)ar.source >> 4) ^ (size_t)ar.currentline * 31u) % SITE_CACHE;
    if (site_cache[slot].source == ar.source && site_cache[slot].line == ar.currentline) return site_cache[slot].id;
    const char *file = ar.source + 1;
    if (!strncmp(file, "./", 2)) file += 2;
    char text[600];
    snprintf(text, sizeof text, "%s:%d", file, ar.currentline);
    const int32_t id = mt_prof_name(text);
    site_cache[slot].source = ar.source;
    site_cache[slot].line = ar.currentline;
    site_cache[slot].id = id;
    return id;
  }
  return -1;
}

/* torch._profiler_start(record_shapes, profile_memory, with_stack, lib_folder):
   a new session; its earlier events go */
static int p_start(lua_State *L) {
  const int flags = (lua_toboolean(L, 1) ? MT_PROF_SHAPES : 0) | (lua_toboolean(L, 2) ? MT_PROF_MEMORY : 0) |
                    (lua_toboolean(L, 3) ? MT_PROF_STACK : 0);
  const char *folder = luaL_optstring(L, 4, "");
  snprintf(lib_prefix, sizeof lib_prefix, "@%s", folder);
  lib_prefix_len = *folder ? strlen(lib_prefix) : 0;
  memset(site_cache, 0, sizeof site_cache);   /* sources of an earlier session may be gone */
  luaL_unref(L, LUA_REGISTRYINDEX, site_ref);
  lua_pushthread(L);
  site_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  site_L = L;
  mt_prof_set_site_fn(lua_site);
  if (mt_prof_start(flags)) return lt_error(L);
  return 0;
}

/* torch._profiler_stop(): the session ends; its events stay readable */
static int p_stop(lua_State *L) {
  mt_prof_stop();
  mt_prof_set_site_fn(NULL);
  luaL_unref(L, LUA_REGISTRYINDEX, site_ref);
  site_ref = LUA_NOREF;
  site_L = NULL;
  return 0;
}

/* torch._profiling(): whether a session records (the libraries' one test) */
static int p_profiling(lua_State *L) {
  lua_pushboolean(L, mt_prof_on);
  return 1;
}

/* torch._profiler_enter(name), torch._profiler_exit(): a named range */
static int p_enter(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (mt_prof_on) mt_prof_begin(mt_prof_name(name), MT_PROF_RANGE, NULL, NULL, NULL);
  return 0;
}

static int p_exit(lua_State *L) {
  (void)L;
  mt_prof_end();
  return 0;
}

static const char *const kinds[] = {"op", "node", "range", "chunk"};

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/* the shapes at words[at]: a list of size lists */
static void push_shapes(lua_State *L, const int64_t *words, int32_t at) {
  const int64_t count = words[at++];
  lua_createtable(L, (int)count, 0);
  for (int64_t i = 0; i < count; i++) {
    const int64_t ndim = words[at++];
    lua_createtable(L, (int)ndim, 0);
    for (int64_t d = 0; d < ndim; d++) {
      lua_pushinteger(L, words[at++]);
      lua_rawseti(L, -2, d + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

/* torch._profiler_events(): the stopped session's events, thread after
   thread, each {name, kind, tid, start, finish (ns from the session's start),
   parent (index in this list), shapes, site, alloc, freed}, and the threads
   {{tid, label}} */
static int p_events(lua_State *L) {
  if (mt_prof_on) return luaL_error(L, "profiler: the session is still recording");
  const int nthreads = mt_prof_threads();
  const int64_t origin = mt_prof_origin();
  lua_newtable(L);
  lua_createtable(L, nthreads, 0);
  lua_Integer base = 0;
  for (int t = 0; t < nthreads; t++) {
    int32_t n;
    const mt_prof_event *ev = mt_prof_events(t, &n);
    const int64_t *words = mt_prof_words(t);
    const int tid = mt_prof_thread_id(t);
    lua_createtable(L, 0, 2);
    set_int(L, "tid", tid);
    lua_pushstring(L, mt_prof_thread_label(t));
    lua_setfield(L, -2, "label");
    lua_rawseti(L, -2, t + 1);
    for (int32_t i = 0; i < n; i++) {
      const mt_prof_event *e = &ev[i];
      lua_createtable(L, 0, 10);
      lua_pushstring(L, e->name >= 0 ? mt_prof_name_text(e->name) : "?");
      lua_setfield(L, -2, "name");
      lua_pushstring(L, kinds[e->kind]);
      lua_setfield(L, -2, "kind");
      set_int(L, "tid", tid);
      set_int(L, "start", e->start_ns - origin);
      set_int(L, "finish", (e->end_ns ? e->end_ns : e->start_ns) - origin);
      if (e->parent >= 0) set_int(L, "parent", base + e->parent + 1);
      if (e->shapes >= 0) {
        push_shapes(L, words, e->shapes);
        lua_setfield(L, -2, "shapes");
      }
      if (e->site >= 0) {
        lua_pushstring(L, mt_prof_name_text(e->site));
        lua_setfield(L, -2, "site");
      }
      set_int(L, "alloc", e->alloc_bytes);
      set_int(L, "freed", e->freed_bytes);
      lua_rawseti(L, -3, base + i + 1);
    }
    base += n;
  }
  lua_pushinteger(L, getpid());
  return 3;
}

static const luaL_Reg functions[] = {
  {"_profiler_start", p_start}, {"_profiler_stop", p_stop}, {"_profiling", p_profiling},
  {"_profiler_enter", p_enter}, {"_profiler_exit", p_exit}, {"_profiler_events", p_events}, {NULL, NULL}};

void lt_open_profiler(lua_State *L) { lt_setfuncs(L, NULL, functions); }
