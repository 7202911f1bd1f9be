/* th.c: the moontorch program -- runs scripts like lua5.4 does, with torch
   preloaded, and otherwise a readline REPL that prints values. */
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <readline/readline.h>
#include <readline/history.h>

#define TH_VERSION "moontorch 0.1 (" LUA_RELEASE ")"
#define TH_PROMPT "th> "
#define TH_PROMPT2 ">>  "
/* lines of history kept in ~/.th_history */
#define TH_HISTORY_LINES 1000

int luaopen_torch_core(lua_State *L);

static lua_State *global_L;
static const char *progname = "th";

/* ---- Ctrl-C: a hook that raises an error at the next Lua instruction ---- */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint_running(int sig) {
  (void)sig;
  lua_sethook(global_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void on_sigint_reading(int sig) {
  (void)sig;
  (void)!write(STDOUT_FILENO, "\n", 1);
  rl_replace_line("", 0);
  rl_on_new_line();
  rl_redisplay();
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Calls the function below narg arguments, with traceback and Ctrl-C. */
static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  signal(SIGINT, on_sigint_running);
  int status = lua_pcall(L, narg, nres, base);
  signal(SIGINT, SIG_DFL);
  lua_remove(L, base);
  return status;
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "%s\n", msg ? msg : "(error)");
    fflush(stderr);
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

static int dolibrary(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) {
    const char *dot = strrchr(name, '.');
    lua_setglobal(L, dot ? dot + 1 : name);
  }
  return report(L, status);
}

/* Script arguments: arg[0] is the script, arg[1..] its arguments, negative
   indices the interpreter and options (as lua5.4). */
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
  if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0) fname = NULL;
  int status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    int n = push_args(L);
    status = docall(L, n, LUA_MULTRET);
  }
  return report(L, status);
}

/* ---- the REPL ---- */
static char *history_path(void) {
  static char path[PATH_MAX];
  const char *home = getenv("HOME");
  if (!home) return NULL;
  snprintf(path, sizeof path, "%s/.th_history", home);
  return path;
}

static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    if (len >= 5 && strcmp(msg + len - 5, "<eof>") == 0) { lua_pop(L, 1); return 1; }
  }
  return 0;
}

static char *read_line(int first) {
  signal(SIGINT, on_sigint_reading);
  char *line = readline(first ? TH_PROMPT : TH_PROMPT2);
  signal(SIGINT, SIG_DFL);
  return line;
}

/* Reads a whole statement (continuing incomplete ones) and compiles it;
   expressions are tried first as "return <line>". Returns -1 at EOF. */
static int load_statement(lua_State *L) {
  char *line = read_line(1);
  if (!line) return -1;
  const char *src = line[0] == '=' ? line + 1 : line;     /* trepl's "=expr" */
  lua_pushfstring(L, "return %s;", src);
  int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
  if (status == LUA_OK) {
    lua_remove(L, -2);
    if (line[0]) add_history(line);
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
    char *more = read_line(0);
    if (!more) break;
    lua_pushliteral(L, "\n");
    lua_pushstring(L, more);
    free(more);
    lua_concat(L, 3);
  }
  const char *code = lua_tostring(L, -2);
  if (code && code[0]) add_history(code);
  lua_remove(L, -2);
  return status;
}

/* Prints results through torch's REPL printer when there is one. */
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
  char *hist = history_path();
  using_history();
  if (hist) read_history(hist);
  rl_readline_name = "th";
  int status;
  while ((status = load_statement(L)) != -1) {
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) print_results(L);
    else report(L, status);
    lua_settop(L, 0);
  }
  printf("\n");
  if (hist) { write_history(hist); history_truncate_file(hist, TH_HISTORY_LINES); }
}

/* The file-based REPL for a non-terminal stdin ("th" fed by a pipe) is the
   script runner on "-". */
static void print_usage(void) {
  fprintf(stderr,
    "usage: %s [options] [script [args]]\n"
    "Available options are:\n"
    "  -e stat   execute string 'stat'\n"
    "  -i        enter interactive mode after executing 'script'\n"
    "  -l mod    require library 'mod' into global 'mod'\n"
    "  -v        show version information\n"
    "  --version show version information\n"
    "  -h --help show this help\n"
    "  --        stop handling options\n"
    "  -         stop handling options and execute stdin\n", progname);
}

static void setup_paths(lua_State *L) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return;
  *slash = 0;                                  /* exe dir: build/ or PREFIX/bin */
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/../lib/?.lua;%s/../lib/?/init.lua;%s/../share/lua/5.4/?.lua;"
                     "%s/../share/lua/5.4/?/init.lua;", exe, exe, exe, exe);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_torch_core);
  lua_setfield(L, -2, "torch.core");
  lua_pop(L, 2);
}

static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  int interactive = 0, version = 0, exec = 0, script = 0, i;
  luaL_openlibs(L);
  setup_paths(L);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') { script = i; break; }
    if (!strcmp(a, "--")) { if (i + 1 < argc) script = i + 1; break; }
    if (!strcmp(a, "-")) { script = i; break; }
    if (!strcmp(a, "-i")) interactive = 1;
    else if (!strcmp(a, "-v") || !strcmp(a, "--version")) version = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { print_usage(); lua_pushboolean(L, 1); return 1; }
    else if (!strcmp(a, "-e") || !strcmp(a, "-l")) { exec = 1; if (++i >= argc) { print_usage(); return 0; } }
    else if (!strncmp(a, "-e", 2) || !strncmp(a, "-l", 2)) exec = 1;
    else { fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a); print_usage(); return 0; }
  }
  if (version) { printf("%s\n", TH_VERSION); fflush(stdout); }
  create_arg_table(L, argv, argc, script ? script : 0);
  if (dolibrary(L, "torch") != LUA_OK) return 0;
  for (i = 1; i < (script ? script : argc); i++) {
    const char *a = argv[i];
    if (a[1] == 'e' || a[1] == 'l') {
      const char *val = a[2] ? a + 2 : argv[++i];
      int st = a[1] == 'e' ? dostring(L, val, "=(command line)") : dolibrary(L, val);
      if (st != LUA_OK) return 0;
    }
  }
  if (script && handle_script(L, argv + script) != LUA_OK) return 0;
  if (interactive || (!script && !exec && !version)) {
    if (isatty(STDIN_FILENO) || interactive) repl(L);
    else if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK) return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (!L) { fprintf(stderr, "%s: cannot create state: not enough memory\n", progname); return 1; }
  global_L = L;
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? 0 : 1;
}
