/* lt_memory.c: the C half of torch.memory -- the Lua traceback recorded for
   each storage made while recording (one shared site per distinct stack),
   and the list of live storages that torch.memory_snapshot returns. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "lt.h"
#include "../tensor/mt_live.h"

/* A traceback keeps its innermost LT_MEM_MAX_FRAMES Lua frames: more than a
   training loop's stack, and a bound on what a deep recursion records. */
#define LT_MEM_MAX_FRAMES 64
/* One frame's text, "file:line in function 'name'" (file as Lua's short_src,
   at most LUA_IDSIZE); longer names are cut. */
#define LT_MEM_FRAME_LEN (LUA_IDSIZE + 96)
/* The site table starts with this many buckets and doubles past one site a
   bucket: a program has a few hundred allocation sites, not millions. */
#define LT_MEM_FIRST_BUCKETS 256

/* ---- sites: a distinct traceback, shared by every record made there ----
   Its key is the frames, innermost first, each as a flag byte ('L' in lib/,
   'U' the user's code) and its text, ending in '\0'. */
typedef struct site {
  struct site *next;              /* in its bucket */
  uint64_t hash;
  int64_t refs;                   /* the records pointing here */
  size_t len;
  char key[];
} site;

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static site **buckets;
static size_t nbuckets, nsites;

static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

/* Doubles the table (under site_lock); stays as it is when out of memory. */
static void grow_sites(void) {
  int64_t n = nbuckets ? (int64_t)nbuckets : LT_MEM_FIRST_BUCKETS;
  if (nbuckets && mt_mul_size("memory sites", n, 2, &n)) return;
  site **b = calloc((size_t)n, sizeof *b);     /* calloc checks n * size */
  if (!b) return;
  for (size_t i = 0; i < nbuckets; i++)
    for (site *st = buckets[i], *next; st; st = next) {
      next = st->next;
      st->next = b[st->hash & (n - 1)];
      b[st->hash & (n - 1)] = st;
    }
  free(buckets);
  buckets = b;
  nbuckets = (size_t)n;
}

/* The site of key, with one more reference; NULL when out of memory. */
static site *site_intern(const char *key, size_t len) {
  uint64_t h = fnv1a(key, len);
  pthread_mutex_lock(&site_lock);
  if (nsites >= nbuckets) grow_sites();
  site *st = NULL;
  if (nbuckets) {
    for (st = buckets[h & (nbuckets - 1)]; st; st = st->next)
      if (st->hash == h && st->len == len && !memcmp(st->key, key, len)) break;
    int64_t bytes;
    if (!st && !mt_add_size("memory sites", (int64_t)sizeof *st, (int64_t)len, &bytes) && (st = malloc((size_t)bytes))) {
      st->hash = h;
      st->refs = 0;
      st->len = len;
      memcpy(st->key, key, len);
      st->next = buckets[h & (nbuckets - 1)];
      buckets[h & (nbuckets - 1)] = st;
      nsites++;
    }
    if (st) st->refs++;
  }
  pthread_mutex_unlock(&site_lock);
  return st;
}

static void site_release(site *st) {
  pthread_mutex_lock(&site_lock);
  if (--st->refs == 0) {
    site **p = &buckets[st->hash & (nbuckets - 1)];
    while (*p != st) p = &(*p)->next;
    *p = st->next;
    nsites--;
    free(st);
  }
  pthread_mutex_unlock(&site_lock);
}

/* ---- recording ----
   Only the thread that turned recording on has a Lua state to read a
   traceback from: storages made on others (the pool's workers) get a record
   without a site. The frames are read from the state's main thread: code
   running in a coroutine shows as the frames that resumed it. */
static _Thread_local lua_State *record_L;
static _Thread_local const char *record_lib;      /* the source prefix of lib/ ("@./lib/"), anchored in the registry */
static int recorders;                             /* threads recording now */

typedef struct {
  int refs;                       /* the registry's slot and each snapshot holding it */
  int ndim;                       /* -1: no shape known */
  site *site;                     /* NULL: made off the recording thread */
  int64_t shape[];
} mem_record;

/* "file:line in function 'name'", as Lua's tracebacks name functions. */
static int frame_text(const lua_Debug *ar, char *buf, size_t n) {
  if (*ar->namewhat)
    return snprintf(buf, n, "%s:%d in %s '%s'", ar->short_src, ar->currentline,
                    strcmp(ar->namewhat, "global") ? ar->namewhat : "function", ar->name);
  if (*ar->what == 'm') return snprintf(buf, n, "%s:%d in main chunk", ar->short_src, ar->currentline);
  return snprintf(buf, n, "%s:%d in function <%s:%d>", ar->short_src, ar->currentline, ar->short_src,
                  ar->linedefined);
}

/* The site of the Lua code running now on L (its Lua frames; C ones are left out). */
static site *site_here(lua_State *L) {
  char key[LT_MEM_MAX_FRAMES * (LT_MEM_FRAME_LEN + 2)];
  size_t len = 0, lib_len = record_lib ? strlen(record_lib) : 0;
  lua_Debug ar;
  int nframes = 0;
  for (int level = 0; nframes < LT_MEM_MAX_FRAMES && lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sln", &ar) || ar.currentline <= 0) continue;
    key[len++] = lib_len && !strncmp(ar.source, record_lib, lib_len) ? 'L' : 'U';
    int n = frame_text(&ar, key + len, LT_MEM_FRAME_LEN);
    len += n < 0 ? 0 : n < LT_MEM_FRAME_LEN ? (size_t)n : LT_MEM_FRAME_LEN - 1;
    key[len++] = '\0';
    nframes++;
  }
  return nframes ? site_intern(key, len) : NULL;
}

static void *record_new(int dtype, int ndim, const int64_t *shape) {
  (void)dtype;                    /* the storage keeps it */
  if (ndim > 0 && !shape) ndim = -1;
  int n = ndim > 0 ? ndim : 0;
  int64_t bytes;
  if (mt_mul_size("memory record", n, (int64_t)sizeof(int64_t), &bytes) ||
      mt_add_size("memory record", bytes, (int64_t)sizeof(mem_record), &bytes))
    return NULL;
  mem_record *r = malloc((size_t)bytes);
  if (!r) return NULL;
  r->refs = 1;
  r->ndim = ndim;
  if (n) memcpy(r->shape, shape, sizeof(int64_t) * (size_t)n);
  r->site = record_L ? site_here(record_L) : NULL;
  return r;
}

static void record_keep(void *p) { __atomic_add_fetch(&((mem_record *)p)->refs, 1, __ATOMIC_RELAXED); }

static void record_drop(void *p) {
  mem_record *r = p;
  if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL)) return;
  if (r->site) site_release(r->site);
  free(r);
}

static const mt_live_hooks hooks = {record_new, record_keep, record_drop};

static void stop_recording(void) {
  if (!record_L) return;
  record_L = NULL;
  record_lib = NULL;
  if (__atomic_sub_fetch(&recorders, 1, __ATOMIC_ACQ_REL) == 0) mt_live_set_recording(0);
}

/* Closing the state stops its thread's recording: record_L must not outlive it. */
static int sentinel_gc(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  if (lua_tothread(L, -1) == record_L) stop_recording();
  return 0;
}

/* torch._memory_record(on, lib_prefix): starts (on true) or stops recording
   on this thread; lib_prefix is the source prefix of lib/ ("@./lib/"). */
static int m_record(lua_State *L) {
  int on = lua_toboolean(L, 1);
  if (!on) { stop_recording(); return 0; }
  const char *lib = luaL_checkstring(L, 2);
  record_lib = NULL;                             /* (the string it pointed into may go now) */
  lua_pushvalue(L, 2);
  lua_setfield(L, LUA_REGISTRYINDEX, "torch.memory.lib");   /* anchors the string record_lib points into */
  if (lua_getfield(L, LUA_REGISTRYINDEX, "torch.memory.sentinel") == LUA_TNIL) {
    lua_newuserdatauv(L, 1, 0);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, sentinel_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "torch.memory.sentinel");
  }
  lua_pop(L, 1);
  record_lib = lib;
  if (record_L) return 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  record_L = lua_tothread(L, -1);
  lua_pop(L, 1);
  mt_live_install(&hooks);
  if (__atomic_add_fetch(&recorders, 1, __ATOMIC_ACQ_REL) == 1) mt_live_set_recording(1);
  return 0;
}

/* torch._memory_recording(): whether this thread records */
static int m_recording(lua_State *L) {
  lua_pushboolean(L, record_L != NULL);
  return 1;
}

/* ---- the list of live storages ---- */
typedef struct { mt_live_info *list; int64_t n; } live_box;

/* Drops what mt_live_list kept; also the box's __gc, for an error midway. */
static int box_free(lua_State *L) {
  live_box *b = luaL_checkudata(L, 1, "torch.memory.list");
  for (int64_t i = 0; i < b->n; i++)
    if (b->list[i].record) record_drop(b->list[i].record);
  free(b->list);
  b->list = NULL;
  b->n = 0;
  return 0;
}

/* Pushes a site's frames, innermost first: every one (all 1), or those of
   the user's code when it has any (else every one). */
static void push_frames(lua_State *L, const site *st, int all) {
  int user = 0;
  for (size_t at = 0; at < st->len; at += strlen(st->key + at) + 1) user |= st->key[at] == 'U';
  lua_newtable(L);
  int k = 0;
  for (size_t at = 0; at < st->len; at += strlen(st->key + at) + 1)
    if (all || !user || st->key[at] == 'U') {
      lua_pushstring(L, st->key + at + 1);
      lua_rawseti(L, -2, ++k);
    }
}

/* Sets entry (at -1) .frames and .full_frames from st, made once a site and
   snapshot (cache: site -> {frames, full_frames}). */
static void set_frames(lua_State *L, int cache, const site *st) {
  if (lua_rawgetp(L, cache, st) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 2, 0);
    push_frames(L, st, 0);
    lua_rawseti(L, -2, 1);
    push_frames(L, st, 1);
    lua_rawseti(L, -2, 2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, cache, st);
  }
  lua_rawgeti(L, -1, 1);
  lua_setfield(L, -3, "frames");
  lua_rawgeti(L, -1, 2);
  lua_setfield(L, -3, "full_frames");
  lua_pop(L, 1);
}

static void push_entry(lua_State *L, int cache, const mt_live_info *e) {
  const mem_record *r = e->record;
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, (lua_Integer)e->nbytes);
  lua_setfield(L, -2, "bytes");
  char buf[32];
  lua_pushstring(L, mt_device_str(e->device, e->device_index, buf, sizeof buf));
  lua_setfield(L, -2, "device");
  if (e->owns == MT_STORAGE_MAPPED) { lua_pushboolean(L, 1); lua_setfield(L, -2, "mapped"); }
  int known = e->dtype >= 0 && e->dtype < MT_NDTYPES;
  if (known) { lua_pushstring(L, mt_dtypes[e->dtype].name); lua_setfield(L, -2, "dtype"); }
  if (r && r->ndim >= 0) {
    lua_createtable(L, r->ndim, 0);
    for (int d = 0; d < r->ndim; d++) { lua_pushinteger(L, r->shape[d]); lua_rawseti(L, -2, d + 1); }
    lua_setfield(L, -2, "shape");
  } else if (known) {                            /* not recorded: its element count */
    lua_createtable(L, 1, 0);
    lua_pushinteger(L, (lua_Integer)(e->nbytes / (size_t)mt_dtypes[e->dtype].size));
    lua_rawseti(L, -2, 1);
    lua_setfield(L, -2, "shape");
  }
  if (r && r->site) set_frames(L, cache, r->site);
}

/* torch._memory_live(): every live storage, as {bytes=, device=, dtype=,
   shape=, frames=, full_frames=, mapped=} (see lib/torch/memory.lua) */
static int m_live(lua_State *L) {
  live_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->list = NULL;
  b->n = 0;
  luaL_setmetatable(L, "torch.memory.list");
  if (mt_live_list(&b->list, &b->n)) luaL_error(L, "memory_snapshot: out of memory");
  lua_newtable(L);                               /* the cache of frames */
  int cache = lua_gettop(L);
  lua_createtable(L, b->n < INT_MAX ? (int)b->n : INT_MAX, 0);
  for (int64_t i = 0; i < b->n; i++) {
    push_entry(L, cache, &b->list[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushcfunction(L, box_free);
  lua_pushvalue(L, cache - 1);
  lua_call(L, 1, 0);
  return 1;
}

static const luaL_Reg functions[] = {
  {"_memory_record", m_record}, {"_memory_recording", m_recording}, {"_memory_live", m_live}, {NULL, NULL}};

void lt_open_memory(lua_State *L) {
  if (luaL_newmetatable(L, "torch.memory.list")) {
    lua_pushcfunction(L, box_free);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  lt_setfuncs(L, NULL, functions);
}
