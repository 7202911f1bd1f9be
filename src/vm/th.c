/* th.c: the moontorch program -- runs scripts as lua5.4 does, with torch
   preloaded, and otherwise a readline REPL that prints values. */
#include "th_launch.h"
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#include <readline/readline.h>
#include <readline/history.h>

#define TH_VERSION "moontorch 0.1 (" LUA_RELEASE ")"
#define TH_PROMPT "th> "
#define TH_PROMPT2 ">>  "
/* Lines of history kept in ~/.th_history: a few weeks of work, a small file. */
#define TH_HISTORY_LINES 1000
/* Completion candidates offered for one word: enough for torch.* in full. */
#define TH_MAX_COMPLETIONS 4096

int luaopen_torch_core(lua_State *L);

static lua_State *global_L;
static const char *progname = "th";

/* ---- Ctrl-C ----
   One handler serves both states. While Lua runs it sets a hook that raises
   "interrupted!" at the next instruction (as lua.c does); while the REPL
   reads a line it only records the signal, and the read loop cancels the
   line. */
static volatile sig_atomic_t running, got_sigint;
static int interrupted;                        /* the terminal echoed ^C mid-line */

static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  interrupted = 1;
  luaL_error(L, "interrupted!");
}

static void on_sigint(int sig) {
  (void)sig;
  if (running) lua_sethook(global_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  else got_sigint = 1;
}

/* No SA_RESTART: the REPL's select() must return on Ctrl-C. The previous
   disposition goes to *old when old is not NULL. */
static void set_sigint(void (*handler)(int), struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, old);
}

/* ---- running chunks ---- */
static int colour_errors;                       /* REPL on a terminal, NO_COLOR unset */

static void message(const char *prefix, const char *msg) {
  fflush(stdout);
  if (interrupted) { fputc('\n', stderr); interrupted = 0; }
  if (colour_errors) fputs("\033[31m", stderr);
  if (prefix) fprintf(stderr, "%s: ", prefix);
  fprintf(stderr, "%s", msg);
  if (colour_errors) fputs("\033[0m", stderr);
  fputc('\n', stderr);
  fflush(stderr);
}

/* ---- tracebacks with true names ----
   Lua's own traceback names a function by the first field of a loaded package
   that holds it, so a function shared by many classes (nn.Module's __call, copied
   into every module class) is reported under whichever class the search meets
   first. Here a frame is named: a method or metamethod by its name and its
   object's class (method 'nn.Linear:forward'); a function held under exactly one
   name in the loaded packages by that name (function 'torch.randn'); otherwise by
   how it was called (field 'no_grad', local 'f'), or by where it is defined. */

/* How many fields of loaded packages hold the function on top of L (the first
   name pushed, "_G." taken off, when there is one); leaves L as it was plus
   the name when count > 0. */
static int global_names(lua_State *L) {
  int top = lua_gettop(L), count = 0;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushnil(L);
  while (lua_next(L, top + 1) != 0) {                   /* package name, package */
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2) != 0) {                     /* field name, value */
        if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, top)) {
          if (count++ == 0) {
            const char *pkg = lua_tostring(L, -4), *field = lua_tostring(L, -2);
            if (strcmp(pkg, LUA_GNAME) == 0) lua_pushstring(L, field);
            else lua_pushfstring(L, "%s.%s", pkg, field);
            lua_replace(L, top);                         /* the name where the function was */
          }
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  return count;
}

/* the class name of the first local (self) of frame ar, pushed; 0 when it has none */
static int self_class(lua_State *L, lua_Debug *ar) {
  if (lua_getlocal(L, ar, 1) == NULL) return 0;
  if (lua_getmetatable(L, -1)) {
    if (lua_getfield(L, -1, "__typename") == LUA_TSTRING) {
      lua_replace(L, -3);
      lua_pop(L, 1);
      return 1;
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  return 0;
}

static void push_frame_name(lua_State *L, lua_State *L1, lua_Debug *ar) {
  int is_method = strcmp(ar->namewhat, "method") == 0, is_meta = strcmp(ar->namewhat, "metamethod") == 0;
  if ((is_method || is_meta) && *ar->what == 'L' && self_class(L1, ar)) {
    if (L1 != L) lua_xmove(L1, L, 1);
    const char *cls = lua_tostring(L, -1);
    if (is_method) lua_pushfstring(L, "method '%s:%s'", cls, ar->name);
    else lua_pushfstring(L, "metamethod '%s' of %s", ar->name, cls);
    lua_remove(L, -2);
    return;
  }
  if (*ar->what == 'm') { lua_pushliteral(L, "main chunk"); return; }
  lua_getinfo(L1, "f", ar);                              /* the function itself */
  if (L1 != L) lua_xmove(L1, L, 1);
  if (global_names(L) == 1 && lua_type(L, -1) == LUA_TSTRING) {
    lua_pushfstring(L, "function '%s'", lua_tostring(L, -1));
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  if (*ar->namewhat != '\0') lua_pushfstring(L, "%s '%s'", ar->namewhat, ar->name);
  else if (*ar->what == 'C') lua_pushliteral(L, "?");
  else lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
}

/* luaL_traceback's text, with the frames named as above */
#define TRACE_FIRST 10                                   /* frames shown before a cut... */
#define TRACE_LAST 11                                    /* ...and after it */
static void th_traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
  luaL_Buffer b;
  lua_Debug ar;
  int last = level;
  while (lua_getstack(L1, last, &ar)) last++;            /* one past the deepest frame */
  luaL_buffinit(L, &b);
  if (msg) { luaL_addstring(&b, msg); luaL_addchar(&b, '\n'); }
  luaL_addstring(&b, "stack traceback:");
  int limit = last - level > TRACE_FIRST + TRACE_LAST ? TRACE_FIRST : -1;
  while (lua_getstack(L1, level++, &ar)) {
    if (limit-- == 0) {
      int skip = last - level - TRACE_LAST + 1;
      lua_pushfstring(L, "\n\t...\t(skipping %d levels)", skip);
      luaL_addvalue(&b);
      level += skip;
      continue;
    }
    lua_getinfo(L1, "Slnt", &ar);
    if (ar.currentline <= 0) lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
    else lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
    luaL_addvalue(&b);
    push_frame_name(L, L1, &ar);
    luaL_addvalue(&b);
    if (ar.istailcall) luaL_addstring(&b, "\n\t(...tail calls...)");
  }
  luaL_pushresult(&b);
}

/* debug.traceback([thread,] [message [, level]]) with th's frame names */
static int th_debug_traceback(lua_State *L) {
  lua_State *L1 = L;
  int arg = 0;
  if (lua_type(L, 1) == LUA_TTHREAD) { L1 = lua_tothread(L, 1); arg = 1; }
  const char *msg = lua_tostring(L, arg + 1);
  if (msg == NULL && !lua_isnoneornil(L, arg + 1)) lua_pushvalue(L, arg + 1);   /* not a message: as is */
  else th_traceback(L, L1, msg, (int)luaL_optinteger(L, arg + 2, L == L1 ? 1 : 0));
  return 1;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  th_traceback(L, L, msg, 1);
  return 1;
}

/* Calls the function below narg arguments, with a traceback and Ctrl-C. */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  struct sigaction old;
  int was_running = running;
  running = 1;
  set_sigint(on_sigint, &old);
  int status = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &old, NULL);
  running = was_running;
  if (lua_gethook(L) == stop_hook) lua_sethook(L, NULL, 0, 0);   /* Ctrl-C came too late */
  lua_remove(L, base);
  return status;
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    message(progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l mod (global mod, or its last dotted part) and -l g=mod (global g). */
static int dolibrary(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '=');
  const char *modname = eq ? eq + 1 : spec;
  lua_getglobal(L, "require");
  lua_pushstring(L, modname);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) {
    if (eq) lua_pushlstring(L, spec, (size_t)(eq - spec));
    else {
      const char *dot = strrchr(spec, '.');
      lua_pushstring(L, dot ? dot + 1 : spec);
    }
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return report(L, status);
}

/* LUA_INIT_5_4 or LUA_INIT: "@file" runs a file, anything else is code. */
static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR;
  const char *init = getenv(name + 1);
  if (init == NULL) { name = "=LUA_INIT"; init = getenv(name + 1); }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return dochunk(L, luaL_loadfile(L, init + 1));
  return dostring(L, init, name);
}

/* Script arguments: arg[0] is the script, arg[1..] its arguments, negative
   indices the interpreter and its options (as lua5.4). */
static void create_arg_table(lua_State *L, char **argv, int argc, int script) {
  lua_createtable(L, argc - script, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int push_args(lua_State *L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
  int n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1);
  return n;
}

static int handle_script(lua_State *L, char **argv) {
  const char *fname = argv[0];
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL;   /* stdin */
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = push_args(L);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

/* ---- the REPL: reading lines ---- */
static char *line_read;
static int line_done;

static void on_line(char *line) {
  line_read = line;
  line_done = 1;
  rl_callback_handler_remove();
}

/* One line through readline's callback interface, so that Ctrl-C can
   abandon it cleanly. Sets *cancelled on Ctrl-C; NULL at end of input. */
static char *read_line(const char *prompt, int *cancelled) {
  *cancelled = 0;
  got_sigint = 0;
  line_done = 0;
  line_read = NULL;
  fflush(stdout);
  rl_callback_handler_install(prompt, on_line);
  while (!line_done) {
    fd_set fds;
    int fd = fileno(rl_instream ? rl_instream : stdin);
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    int r = select(fd + 1, &fds, NULL, NULL, NULL);
    if (got_sigint) {                          /* drop the line, keep the session */
      rl_point = rl_end;
      rl_redisplay();
      fputs("^C\n", stdout);
      fflush(stdout);
      rl_free_line_state();
      rl_callback_sigcleanup();
      rl_cleanup_after_signal();
      rl_callback_handler_remove();
      *cancelled = 1;
      break;
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      rl_callback_handler_remove();
      break;
    }
    rl_callback_read_char();
  }
  return line_read;
}

/* ---- the REPL: completing names ----
   Completion runs none of the user's code: values are read with raw gets,
   going up a metatable's __index when it is a table (a class and its
   parents) and to the metatable itself when __index is a function (the
   class of an nn module); a tensor's methods and fields come from the
   methods table and the list below, never from its __index. */

/* How many __index tables a lookup follows (a class hierarchy; stops cycles). */
#define TH_MAX_CHAIN 32

static const char *const lua_keywords[] = {
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
  "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", NULL};

/* The fields a tensor answers besides its methods (lt_tensor.c, lt_autograd.c). */
static const char *const tensor_fields[] = {
  "shape", "dtype", "device", "ndim", "requires_grad", "grad", "grad_fn", "is_leaf",
  "retains_grad", "data", NULL};

typedef struct {
  const char *text;            /* the word completed: "torch.ze", "x:na", "pri" */
  char **out;                  /* candidates in out[1 .. n - 1]; out[0] comes last */
  int n;
} completion;

static int is_tensor(lua_State *L, int idx) { return luaL_testudata(L, idx, "torch.Tensor.mt") != NULL; }

/* Replaces the value on top by the next table up its chain: its metatable's
   __index when that is a table; the metatable itself when __index is a
   function (a torch.class instance with a reading function, such as an nn
   module: the class holds the methods); else nil. */
static void chain_next(lua_State *L) {
  if (lua_getmetatable(L, -1)) {
    lua_pushliteral(L, "__index");
    int t = lua_rawget(L, -2);
    if (t == LUA_TTABLE) lua_remove(L, -2);
    else if (t == LUA_TFUNCTION) lua_pop(L, 1);
    else { lua_pop(L, 2); lua_pushnil(L); }
  } else {
    lua_pushnil(L);
  }
  lua_remove(L, -2);
}

/* Pushes the table of fields an nn module keeps (self._fields, read by its
   __index) when the table on top has one; returns whether it did. */
static int module_fields(lua_State *L) {
  lua_pushliteral(L, "_fields");
  if (lua_rawget(L, -2) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  return 0;
}

/* Pushes v[key] for the value v on top (popped), read without running code:
   raw gets up v's chain; nil when not found that way. */
static void raw_field(lua_State *L, const char *key, size_t len) {
  for (int depth = 0; depth < TH_MAX_CHAIN && !lua_isnil(L, -1); depth++) {
    if (is_tensor(L, -1)) break;               /* its fields come from C code */
    if (lua_istable(L, -1)) {
      lua_pushlstring(L, key, len);
      if (lua_rawget(L, -2) != LUA_TNIL) { lua_remove(L, -2); return; }
      lua_pop(L, 1);
      if (module_fields(L)) {
        lua_pushlstring(L, key, len);
        if (lua_rawget(L, -2) != LUA_TNIL) { lua_remove(L, -2); lua_remove(L, -2); return; }
        lua_pop(L, 2);
      }
    }
    chain_next(L);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
}

static void add_candidate(completion *c, const char *head, size_t hlen, const char *name) {
  if (c->n >= TH_MAX_COMPLETIONS - 1) return;
  size_t len = hlen + strlen(name) + 1;
  char *s = malloc(len);
  if (s) { snprintf(s, len, "%.*s%s", (int)hlen, head, name); c->out[c->n++] = s; }
}

/* Names that complete prefix: private ones (_x) only when asked for. */
static int wanted(const char *name, const char *prefix, size_t plen) {
  return strncmp(name, prefix, plen) == 0 && (name[0] != '_' || prefix[0] == '_');
}

static int is_identifier(const char *s) {
  if (!isalpha((unsigned char)*s) && *s != '_') return 0;
  while (*++s) if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* Adds the identifier keys of the table on top that start with prefix. */
static void add_keys(lua_State *L, completion *c, const char *head, size_t hlen, const char *prefix) {
  size_t plen = strlen(prefix);
  int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      if (wanted(k, prefix, plen) && is_identifier(k)) add_candidate(c, head, hlen, k);
    }
  }
}

static void add_names(completion *c, const char *const *names, const char *head, size_t hlen, const char *prefix) {
  size_t plen = strlen(prefix);
  for (; *names; names++) if (wanted(*names, prefix, plen)) add_candidate(c, head, hlen, *names);
}

/* Collects the candidates for c->text (a protected call: raw gets and
   strings may still run out of memory). */
static int collect_candidates(lua_State *L) {
  completion *c = lua_touserdata(L, 1);
  const char *text = c->text, *sep = NULL;
  for (const char *p = text; *p; p++) if (*p == '.' || *p == ':') sep = p;
  const char *prefix = sep ? sep + 1 : text;
  size_t hlen = sep ? (size_t)(sep - text + 1) : 0;
  lua_getglobal(L, "torch");                          /* the modules torch loads on first use, */
  if (lua_istable(L, -1) && lua_getfield(L, -1, "_load_all") == LUA_TFUNCTION) lua_call(L, 0, 0);  /* loaded */
  lua_settop(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  for (const char *p = text; sep && p < sep;) {     /* the value the path before sep names */
    size_t len = strcspn(p, ".:");
    if (p + len > sep) len = (size_t)(sep - p);
    raw_field(L, p, len);
    p += len + 1;
  }
  if (is_tensor(L, -1)) {
    lua_pushliteral(L, "torch.Tensor.methods");
    if (lua_rawget(L, LUA_REGISTRYINDEX) == LUA_TTABLE) add_keys(L, c, text, hlen, prefix);
    lua_pop(L, 1);
    if (*sep == '.') add_names(c, tensor_fields, text, hlen, prefix);
    return 0;
  }
  for (int depth = 0; depth < TH_MAX_CHAIN && !lua_isnil(L, -1); depth++) {
    if (lua_istable(L, -1)) {
      add_keys(L, c, text, hlen, prefix);
      if (module_fields(L)) { add_keys(L, c, text, hlen, prefix); lua_pop(L, 1); }
    }
    chain_next(L);
  }
  if (!sep) add_names(c, lua_keywords, text, hlen, prefix);
  return 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Candidates for text ("torch.ze", "x:ad", "pri"), sorted and unique; a
   single method candidate (after ':') gets its '('. */
static char **complete(const char *text, int start, int end) {
  (void)start; (void)end;
  lua_State *L = global_L;
  rl_attempted_completion_over = 1;
  rl_completion_append_character = '\0';
  completion c = {text, calloc(TH_MAX_COMPLETIONS + 1, sizeof(char *)), 1};   /* out[0]: the common prefix */
  if (!c.out) return NULL;
  int top = lua_gettop(L);
  lua_pushcfunction(L, collect_candidates);
  lua_pushlightuserdata(L, &c);
  int status = lua_pcall(L, 1, 0, 0);
  lua_settop(L, top);
  if (status != LUA_OK || c.n == 1) {
    for (int i = 1; i < c.n; i++) free(c.out[i]);
    free(c.out);
    return NULL;
  }
  qsort(c.out + 1, (size_t)(c.n - 1), sizeof(char *), compare_names);
  int n = 2;                                  /* inherited names repeat: keep one */
  for (int i = 2; i < c.n; i++) {
    if (strcmp(c.out[i], c.out[n - 1]) == 0) free(c.out[i]);
    else c.out[n++] = c.out[i];
  }
  c.out[n] = NULL;
  if (n == 2) {                               /* one match */
    const char *colon = strrchr(text, ':');
    if (colon && !strchr(colon, '.')) {
      size_t len = strlen(c.out[1]);
      char *call = malloc(len + 2);
      if (call) { memcpy(call, c.out[1], len); memcpy(call + len, "(", 2); free(c.out[1]); c.out[1] = call; }
    }
    c.out[0] = c.out[1];
    c.out[1] = NULL;
    return c.out;
  }
  size_t common = strlen(c.out[1]);           /* out[0]: the longest common prefix */
  for (int i = 2; i < n; i++) {
    size_t k = 0;
    while (k < common && c.out[i][k] == c.out[1][k]) k++;
    common = k;
  }
  c.out[0] = strndup(c.out[1], common);
  return c.out;
}

/* ---- the REPL: statements ---- */
static char *history_path(void) {
  static char path[PATH_MAX];
  const char *home = getenv("HOME");
  if (!home) return NULL;
  snprintf(path, sizeof path, "%s/.th_history", home);
  return path;
}

/* Saved at once, so a session that ends in os.exit() keeps its lines. */
static void remember(const char *code) {
  if (!code[0]) return;
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && strcmp(last->line, code) == 0) return;
  add_history(code);
  const char *hist = history_path();
  if (hist) append_history(1, hist);
}

static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    if (len >= 5 && strcmp(msg + len - 5, "<eof>") == 0) { lua_pop(L, 1); return 1; }
  }
  return 0;
}

/* Compiles "?what": help(what, 'what') for a name -- a method x:f read as
   x.f, the function itself -- else help(what) for an expression. */
static int load_help(lua_State *L, const char *what) {
  while (isspace((unsigned char)*what)) what++;
  size_t len = strlen(what), plain = 0;
  while (len && isspace((unsigned char)what[len - 1])) len--;
  while (plain < len && (isalnum((unsigned char)what[plain]) || strchr("_.:", what[plain]))) plain++;
  if (plain == len) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "return help(");
    for (size_t i = 0; i < len; i++) luaL_addchar(&b, what[i] == ':' ? '.' : what[i]);
    if (len) { luaL_addstring(&b, ", '"); luaL_addlstring(&b, what, len); luaL_addchar(&b, '\''); }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
  } else {
    lua_pushfstring(L, "return help(%s)", what);
  }
  int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
  lua_remove(L, -2);
  return status;
}

/* Whether line is word alone (spaces and a ';' around it allowed). */
static int is_word(const char *line, const char *word) {
  while (isspace((unsigned char)*line)) line++;
  size_t n = strlen(word);
  if (strncmp(line, word, n) != 0) return 0;
  line += n;
  while (isspace((unsigned char)*line) || *line == ';') line++;
  return *line == 0;
}

enum { READ_EOF = -1, READ_CANCELLED = -2 };

/* Reads a whole statement (continuing incomplete ones) and compiles it;
   a line is tried first as "return <line>" so expressions print. "=expr"
   works as in Lua 5.1 and trepl. Returns a load status or READ_*. */
static int load_statement(lua_State *L) {
  int cancelled;
  char *line = read_line(TH_PROMPT, &cancelled);
  if (cancelled) return READ_CANCELLED;
  if (!line) return READ_EOF;
  const char *src = line[0] == '=' ? line + 1 : line;
  /* "%time code": torch._repl_time over the code (an expression or a
     statement); "?name": help (load_help) */
  if (strncmp(src, "%time", 5) == 0 && (src[5] == ' ' || src[5] == '\t')) {
    const char *code = src + 6;
    lua_pushfstring(L, "return torch._repl_time(function() return %s\n end)", code);
    if (luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin") != LUA_OK) {
      lua_pop(L, 2);
      lua_pushfstring(L, "return torch._repl_time(function() %s\n end)", code);
      if (luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin") != LUA_OK) {
        lua_remove(L, -2);                     /* the syntax error */
        remember(line);
        free(line);
        return LUA_ERRSYNTAX;
      }
    }
    lua_remove(L, -2);
    remember(line);
    free(line);
    return LUA_OK;
  }
  if (src[0] == '?') {
    int st = load_help(L, src + 1);
    remember(line);
    free(line);
    return st;
  }
  if (is_word(src, "help")) {                  /* the bare word prints the help, as help() */
    lua_pushliteral(L, "return torch._repl_word(help)");
    int st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
    lua_remove(L, -2);
    remember(line);
    free(line);
    return st;
  }
  lua_pushfstring(L, "return %s;", src);
  int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
  if (status == LUA_OK) {
    lua_remove(L, -2);
    remember(line);
    free(line);
    return LUA_OK;
  }
  lua_pop(L, 2);
  lua_pushstring(L, line);
  free(line);
  for (;;) {
    size_t len;
    const char *code = lua_tolstring(L, -1, &len);
    status = luaL_loadbuffer(L, code, len, "=stdin");
    if (!incomplete(L, status)) break;
    char *more = read_line(TH_PROMPT2, &cancelled);
    if (cancelled) { lua_pop(L, 1); return READ_CANCELLED; }
    if (!more) {                               /* end of input inside a statement */
      status = luaL_loadbuffer(L, code, len, "=stdin");
      break;
    }
    lua_pushliteral(L, "\n");
    lua_pushstring(L, more);
    free(more);
    lua_concat(L, 3);
  }
  remember(lua_tostring(L, -2));
  lua_remove(L, -2);
  return status;
}

/* Prints the results through torch's REPL printer (tensors as print shows
   them, summarized past torch.set_printoptions' threshold), else through print. */
static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  lua_getglobal(L, "torch");
  if (lua_istable(L, -1)) lua_getfield(L, -1, "_repl_print");
  else lua_pushnil(L);
  lua_remove(L, -2);
  if (!lua_isfunction(L, -1)) { lua_pop(L, 1); lua_getglobal(L, "print"); }
  lua_insert(L, 1);
  if (docall(L, n, 0) != LUA_OK) report(L, LUA_ERRRUN);
}

static void repl(lua_State *L) {
  const char *saved = progname;
  const char *hist = history_path();
  progname = NULL;                             /* REPL errors carry no "th:" */
  lua_settop(L, 0);
  rl_readline_name = "th";
  rl_catch_signals = 0;                        /* Ctrl-C is ours (read_line) */
  rl_attempted_completion_function = complete;
  rl_completer_word_break_characters = " \t\n\"'`@$><=;|&{(,+-*/%^#~[]";
  using_history();
  history_comment_char = '#';                  /* "#<time>" lines delimit multi-line entries */
  history_write_timestamps = 1;
  history_multiline_entries = 1;
  if (hist) {
    if (read_history(hist) != 0) write_history(hist);   /* creates it */
    else history_truncate_file(hist, TH_HISTORY_LINES);
  }
  if (isatty(STDIN_FILENO)) printf("%s  help() for help, Ctrl-C interrupts, Ctrl-D exits\n", TH_VERSION);
  /* the session's lazy globals (nn, optim, data) and the bare word help: lib/torch/repl.lua */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "torch.repl");
  int st = docall(L, 1, 1);
  if (st != LUA_OK) report(L, st);
  else if (lua_istable(L, -1) && lua_getfield(L, -1, "_repl_start") == LUA_TFUNCTION && (st = docall(L, 0, 0)) != LUA_OK)
    report(L, st);
  lua_settop(L, 0);
  /* colour when the output is a terminal, unless NO_COLOR (no-color.org) or TERM=dumb */
  const char *term = getenv("TERM"), *no_colour = getenv("NO_COLOR");
  int colour = isatty(STDOUT_FILENO) && !(no_colour && no_colour[0]) && !(term && !strcmp(term, "dumb"));
  colour_errors = colour && isatty(STDERR_FILENO);
  lua_getglobal(L, "torch");
  if (lua_istable(L, -1)) { lua_pushboolean(L, colour); lua_setfield(L, -2, "_repl_colour"); }
  lua_pop(L, 1);
  struct sigaction old;
  set_sigint(on_sigint, &old);                 /* for the whole session */
  int status;
  while ((status = load_statement(L)) != READ_EOF) {
    if (status == READ_CANCELLED) { lua_settop(L, 0); continue; }
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L);
    else report(L, status);
    lua_settop(L, 0);
  }
  sigaction(SIGINT, &old, NULL);
  colour_errors = 0;
  printf("\n");
  fflush(stdout);
  progname = saved;
}

/* ---- options ---- */
static void print_usage(FILE *f) {
  fprintf(f,
    "usage: %s [options] [script [args]]\n"
    "Available options are:\n"
    "  -e stat   execute string 'stat'\n"
    "  -i        enter interactive mode after executing 'script'\n"
    "  -l mod    require library 'mod' into global 'mod'\n"
    "  -l g=mod  require library 'mod' into global 'g'\n"
    "  -v        show version information\n"
    "  -E        ignore environment variables\n"
    "  -W        turn warnings on\n"
    "  --torch7  Torch7's answers where Torch7 and PyTorch differ (docs/torch7.md)\n"
    "  --nproc N run the script on N ranks under mpirun, each line prefixed\n"
    "            with its rank (docs/distributed.md)\n"
    "  --version show version information\n"
    "  -h --help show this help\n"
    "  --        stop handling options\n"
    "  -         stop handling options and execute stdin\n"
    "torch is loaded before anything runs.\n", progname);
  fflush(f);
}

/* The lib/ beside the binary (build tree or PREFIX) comes before the
   default paths, and so do the C modules beside it; torch.core is linked in. */
static void setup_paths(lua_State *L) {
  char exe[PATH_MAX];
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_torch_core);
  lua_setfield(L, -2, "torch.core");
  lua_pop(L, 1);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
  if (slash) {
    *slash = 0;                                /* exe dir: build/ or PREFIX/bin */
    lua_pushfstring(L, "%s/../lib/?.lua;%s/../lib/?/init.lua;%s/../share/lua/5.4/?.lua;"
                       "%s/../share/lua/5.4/?/init.lua;", exe, exe, exe, exe);
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    /* the C modules beside it: build/torch/cuda.so, PREFIX/lib/lua/5.4/torch/cuda.so */
    lua_pushfstring(L, "%s/?.so;%s/../lib/lua/5.4/?.so;", exe, exe);
    lua_getfield(L, -2, "cpath");
    lua_concat(L, 2);
    lua_setfield(L, -2, "cpath");
  }
  lua_pop(L, 1);
}

enum { HAS_I = 1, HAS_V = 2, HAS_E = 4, HAS_UPPER_E = 8, HAS_ERROR = 16, HAS_HELP = 32, HAS_TORCH7 = 64 };

/* Scans the options; returns flags and sets *script to the index of the
   script (0 when none). */
static int collect_args(int argc, char **argv, int *script) {
  int flags = 0;
  *script = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !strcmp(a, "-")) { *script = i; return flags; }
    if (!strcmp(a, "--")) { if (i + 1 < argc) *script = i + 1; return flags; }
    if (!strcmp(a, "--version") || !strcmp(a, "-v")) flags |= HAS_V;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) flags |= HAS_HELP;
    else if (!strcmp(a, "--torch7")) flags |= HAS_TORCH7;
    else if (!strcmp(a, "-i")) flags |= HAS_I | HAS_V;
    else if (!strcmp(a, "-E")) flags |= HAS_UPPER_E;
    else if (!strcmp(a, "-W")) ;
    else if (a[1] == 'e' || a[1] == 'l') {
      if (a[1] == 'e') flags |= HAS_E;
      if (!a[2] && (++i >= argc || argv[i][0] == '-')) {
        fprintf(stderr, "%s: '%s' needs an argument\n", progname, a);
        return HAS_ERROR;
      }
    } else {
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
      return HAS_ERROR;
    }
  }
  return flags;
}

/* Runs -e, -l and -W in order. */
static int run_args(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-W")) { lua_warning(L, "@on", 0); continue; }
    if (a[0] != '-' || (a[1] != 'e' && a[1] != 'l')) continue;
    const char *val = a[2] ? a + 2 : argv[++i];
    int st = a[1] == 'e' ? dostring(L, val, "=(command line)") : dolibrary(L, val);
    if (st != LUA_OK) return 0;
  }
  return 1;
}

static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  int script;
  int flags = collect_args(argc, argv, &script);
  if (flags & HAS_ERROR) { print_usage(stderr); return 0; }
  if (flags & HAS_HELP) { print_usage(stdout); lua_pushboolean(L, 1); return 1; }
  if ((flags & HAS_V) && !(flags & HAS_I)) { printf("%s\n", TH_VERSION); fflush(stdout); }
  if (flags & HAS_UPPER_E) { lua_pushboolean(L, 1); lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV"); }
  luaL_openlibs(L);
  lua_getglobal(L, "debug");                       /* debug.traceback names frames as th's own */
  lua_pushcfunction(L, th_debug_traceback);
  lua_setfield(L, -2, "traceback");
  lua_pop(L, 1);
  setup_paths(L);
  create_arg_table(L, argv, argc, script);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (!(flags & HAS_UPPER_E) && handle_luainit(L) != LUA_OK) return 0;
  if (dolibrary(L, "torch") != LUA_OK) return 0;
  if ((flags & HAS_TORCH7) && dostring(L, "torch.dialect('torch7')", "=(--torch7)") != LUA_OK) return 0;
  if (!run_args(L, argv, script > 0 ? script : argc)) return 0;
  if (script && handle_script(L, argv + script) != LUA_OK) return 0;
  if (flags & HAS_I) repl(L);
  else if (!script && !(flags & (HAS_E | HAS_V))) {
    if (isatty(STDIN_FILENO)) repl(L);
    else if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- Lua's allocator: size-class free lists for small blocks ----
   Every tensor op creates a userdata of a few hundred bytes; glibc's malloc
   and free are a large share of a tiny op's cost. Lua passes the old size of
   every block it frees or resizes, so small blocks need no header: they come
   from per-class free lists carved out of larger chunks. Chunks are kept for
   reuse, never returned (their total is the peak of small Lua objects). */
#define TH_ALLOC_QUANTUM 16
#define TH_ALLOC_MAX_SMALL 512          /* above this, malloc/realloc/free */
#define TH_ALLOC_CHUNK (64 * 1024)
#define TH_ALLOC_NCLASSES (TH_ALLOC_MAX_SMALL / TH_ALLOC_QUANTUM)

typedef struct free_block { struct free_block *next; } free_block;
static free_block *free_lists[TH_ALLOC_NCLASSES];
static char *chunk_cur, *chunk_end;

static int size_class(size_t n) { return (int)((n + TH_ALLOC_QUANTUM - 1) / TH_ALLOC_QUANTUM) - 1; }

static void *small_alloc(int cls) {
  free_block *b = free_lists[cls];
  if (b) { free_lists[cls] = b->next; return b; }
  size_t size = (size_t)(cls + 1) * TH_ALLOC_QUANTUM;
  if (!chunk_cur || (size_t)(chunk_end - chunk_cur) < size) {
    chunk_cur = malloc(TH_ALLOC_CHUNK);
    if (!chunk_cur) return NULL;
    chunk_end = chunk_cur + TH_ALLOC_CHUNK;
  }
  void *p = chunk_cur;
  chunk_cur += size;
  return p;
}

static void small_free(void *p, int cls) {
  free_block *b = p;
  b->next = free_lists[cls];
  free_lists[cls] = b;
}

static void *th_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  int old_small = ptr && osize <= TH_ALLOC_MAX_SMALL;
  if (nsize == 0) {
    if (old_small) small_free(ptr, size_class(osize));
    else free(ptr);
    return NULL;
  }
  if (nsize <= TH_ALLOC_MAX_SMALL) {
    int cls = size_class(nsize);
    if (old_small && size_class(osize) == cls) return ptr;
    void *p = small_alloc(cls);
    if (!p) return NULL;
    if (ptr) {
      memcpy(p, ptr, osize < nsize ? osize : nsize);
      if (old_small) small_free(ptr, size_class(osize)); else free(ptr);
    }
    return p;
  }
  if (old_small) {
    void *p = malloc(nsize);
    if (!p) return NULL;
    memcpy(p, ptr, osize);
    small_free(ptr, size_class(osize));
    return p;
  }
  return realloc(ptr, nsize);
}

/* Warnings as lua5.4 handles them: off until warn("@on"). */
static void th_warn(void *ud, const char *msg, int tocont) {
  static int on, continuing;
  (void)ud;
  if (!continuing && !tocont && msg[0] == '@') {
    if (strcmp(msg, "@on") == 0) on = 1;
    else if (strcmp(msg, "@off") == 0) on = 0;
    return;
  }
  if (on) fprintf(stderr, "%s%s%s", continuing ? "" : "Lua warning: ", msg, tocont ? "" : "\n");
  continuing = tocont;
}

static int th_panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n", msg ? msg : "error object is not a string");
  return 0;
}

int main(int argc, char **argv) {
  int launched = th_launch(argc, argv);         /* th --nproc N: mpirun takes over, or it failed */
  if (launched) return launched;
  th_rank_prefix();
  lua_State *L = lua_newstate(th_alloc, NULL);
  if (L) { lua_setwarnf(L, th_warn, NULL); lua_atpanic(L, th_panic); }
  if (!L) { message(argv[0], "cannot create state: not enough memory"); return EXIT_FAILURE; }
  global_L = L;
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
