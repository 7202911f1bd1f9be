/* lt_serialize.c: what torch.save/torch.load and safetensors need from C --
   tensor bytes in and out, checksums, fsync, symlinks followed before a
   write, tensors read from a file, and the error when a mapped one shrinks. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "lt.h"
#include "../tensor/mt_io.h"
#include "../tensor/mt_mapguard.h"

/* Both file formats are little-endian, and tensors are copied byte for byte. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "moontorch's file formats assume a little-endian machine"
#endif

/* The bytes of a contiguous tensor of dtype and shape, or -1 when a size is
   negative or the count overflows (a zero dim does not hide a huge one). */
static int64_t shape_bytes(int dtype, int ndim, const int64_t *shape) {
  int64_t nonzero = (int64_t)mt_dtypes[dtype].size;
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) { empty = 1; continue; }
    if (nonzero > INT64_MAX / shape[i]) return -1;
    nonzero *= shape[i];
  }
  return empty ? 0 : nonzero;
}

/* Raises unless every byte of a bool tensor's data is 0 or 1: any other byte
   would be a bool that is neither true nor false to the kernels. */
static void check_bools(lua_State *L, const mt_tensor *t, const char *op, const char *name) {
  if (t->dtype != MT_BOOL) return;
  const unsigned char *p = (const unsigned char *)mt_data(t);
  int64_t n = mt_numel(t);
  for (int64_t i = 0; i < n; i++)
    if (p[i] > 1)
      luaL_error(L, "%s%s: bool value %I is byte %d (only 0 and 1 are bools)", op, name, (lua_Integer)(i + 1), p[i]);
}

static const char *shape_text(int ndim, const int64_t *shape, char *buf, size_t n) {
  return ndim ? mt_dims_str(shape, ndim, buf, n) : "[] (a scalar)";
}

/* torch._tensor_bytes(t): the values of t (row-major, native byte order) as a string */
static int s_tensor_bytes(lua_State *L) {
  mt_tensor *t = lt_check(L, 1, "_tensor_bytes");
  size_t n = (size_t)mt_numel(t) * mt_dtypes[t->dtype].size;
  if (mt_is_contiguous(t)) { lua_pushlstring(L, mt_data(t), n); return 1; }
  mt_tensor *c = lt_push(L);
  LT_TRY(L, mt_clone(c, t));
  lua_pushlstring(L, mt_data(c), n);
  return 1;
}

/* torch._write_tensor(file, t): writes the values of t to an open Lua file,
   without making a string of them; true, or nil and the reason */
static int s_write_tensor(lua_State *L) {
  luaL_Stream *stream = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  mt_tensor *t = lt_check(L, 2, "_write_tensor");
  if (!stream->closef) luaL_error(L, "_write_tensor: the file is closed");
  if (!mt_is_contiguous(t)) {
    mt_tensor *c = lt_push(L);
    LT_TRY(L, mt_clone(c, t));
    t = c;
  }
  size_t n = (size_t)mt_numel(t) * mt_dtypes[t->dtype].size;
  return luaL_fileresult(L, n == 0 || fwrite(mt_data(t), 1, n, stream->f) == n, NULL);
}

/* torch._tensor_from_bytes(s, dtype, {shape}, op): a new tensor holding the
   bytes of s; errors start with op (the loader and the file) */
static int s_tensor_from_bytes(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  const char *op = luaL_optstring(L, 4, "_tensor_from_bytes");
  int dtype = lt_check_dtype_name(L, 2, op);
  int64_t shape[MT_MAX_DIMS];
  int n = lt_read_shape(L, 3, 3, shape, op);
  int64_t want = shape_bytes(dtype, n, shape);
  char buf[256];
  if (want < 0)
    luaL_error(L, "%s: a %s tensor of size %s is too large", op, mt_dtypes[dtype].name,
               shape_text(n, shape, buf, sizeof buf));
  if ((uint64_t)want != len)
    luaL_error(L, "%s: %I bytes of data for a %s tensor of size %s (%I bytes)", op, (lua_Integer)len,
               mt_dtypes[dtype].name, shape_text(n, shape, buf, sizeof buf), (lua_Integer)want);
  mt_tensor *r = lt_push(L);
  if (mt_tensor_init_op(op, r, dtype, n, shape)) lt_error(L);
  if (len) memcpy(mt_data(r), s, len);
  check_bools(L, r, op, "");
  return 1;
}

/* One tensor of a file: where its bytes are and what they make. */
typedef struct {
  int dtype, ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t first, nbytes;        /* byte offset in the file, byte count */
} file_tensor;

/* Reads spec (a table {name, dtype, {shape}, first byte, byte count}) at
   index i into ft, checking it; the name is left on the stack. */
static void read_spec(lua_State *L, int i, file_tensor *ft, const char *op) {
  luaL_checktype(L, i, LUA_TTABLE);
  lua_geti(L, i, 1);
  const char *name = lua_tostring(L, -1);
  if (!name) luaL_error(L, "%s: a tensor spec without a name", op);
  lua_geti(L, i, 2);
  ft->dtype = lt_check_dtype_name(L, -1, op);
  lua_geti(L, i, 3);
  ft->ndim = lt_read_shape(L, lua_gettop(L), lua_gettop(L), ft->shape, op);
  lua_geti(L, i, 4);
  lua_geti(L, i, 5);
  ft->first = luaL_checkinteger(L, -2);
  ft->nbytes = luaL_checkinteger(L, -1);
  lua_pop(L, 4);
  char buf[256];
  int64_t want = shape_bytes(ft->dtype, ft->ndim, ft->shape);
  if (want < 0 || want != ft->nbytes || ft->first < 0)
    luaL_error(L, "%s: tensor '%s': %I bytes at offset %I do not hold a %s tensor of size %s", op, name,
               (lua_Integer)ft->nbytes, (lua_Integer)ft->first, mt_dtypes[ft->dtype].name,
               shape_text(ft->ndim, ft->shape, buf, sizeof buf));
}

/* torch._file_tensors(path, {spec, ...}, mmap, op) -> {tensor, ...}
   The file is mapped once (copy on write: writes never reach it). With mmap
   each tensor whose offset suits its dtype's alignment is a view of the
   mapping, so nothing is read until used; the rest are copied out, and
   without mmap every tensor is, after which the mapping goes. */
static int s_file_tensors(lua_State *L) {
  const char *path = lt_check_path(L, 1, "file_tensors");
  luaL_checktype(L, 2, LUA_TTABLE);
  int mapped = lua_toboolean(L, 3);
  const char *op = luaL_checkstring(L, 4);
  int n = (int)lt_len(L, 2, LT_MAX_TABLE_LEN, "tensor specs", op);
  mt_tensor *file = lt_push(L);                   /* the mapping, freed by the collector on an error */
  if (mt_map_file(file, path, MT_UINT8)) luaL_error(L, "%s: %s", op, mt_error());
  int64_t file_bytes = file->shape[0];
  lua_createtable(L, n, 0);
  for (int i = 1; i <= n; i++) {
    file_tensor ft;
    lua_geti(L, 2, i);
    read_spec(L, lua_gettop(L), &ft, op);
    const char *name = lua_tostring(L, -1);
    if (ft.first > file_bytes || ft.nbytes > file_bytes - ft.first)
      luaL_error(L, "%s: tensor '%s': bytes %I..%I lie past the end of the file (%I bytes)", op, name,
                 (lua_Integer)ft.first, (lua_Integer)(ft.first + ft.nbytes), (lua_Integer)file_bytes);
    size_t es = mt_dtypes[ft.dtype].size;
    mt_tensor *t = lt_push(L);
    if (mapped && ft.first % (int64_t)es == 0) {
      mt_storage_retain(file->storage);
      t->storage = file->storage;
      t->offset = ft.first / (int64_t)es;
      t->dtype = ft.dtype;
      t->ndim = ft.ndim;
      memcpy(t->shape, ft.shape, sizeof(int64_t) * (size_t)ft.ndim);
      mt_contiguous_strides(ft.ndim, ft.shape, t->stride);
    } else {
      if (mt_tensor_init_op(op, t, ft.dtype, ft.ndim, ft.shape)) lt_error(L);
      if (ft.nbytes) memcpy(mt_data(t), (char *)file->storage->data + ft.first, (size_t)ft.nbytes);
    }
    char where[300];
    snprintf(where, sizeof where, ": tensor '%s'", name);
    check_bools(L, t, op, where);
    lua_rawseti(L, -4, i);
    lua_pop(L, 2);                                /* the spec and its name */
  }
  mt_tensor_release(file);                        /* views keep the mapping alive */
  return 1;
}

/* torch._crc32(s): zlib's CRC-32 of a string */
static int s_crc32(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (len > 0) {
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    crc = crc32(crc, (const Bytef *)s, chunk);
    s += chunk;
    len -= chunk;
  }
  lua_pushinteger(L, (lua_Integer)crc);
  return 1;
}

/* nil and the reason of error e, as io functions return them */
static int fail_with(lua_State *L, int e) {
  errno = e;
  return luaL_fileresult(L, 0, NULL);
}

/* torch._fsync(path): flushes a written file (or a folder) to the disk;
   true, or nil and the reason */
static int s_fsync(lua_State *L) {
  const char *path = lt_check_path(L, 1, "fsync");
  int fd = open(path, O_RDONLY);
  if (fd < 0) return fail_with(L, errno);
  int failed = fsync(fd) == 0 ? 0 : errno;
  close(fd);
  return failed ? fail_with(L, failed) : luaL_fileresult(L, 1, NULL);
}

/* Symlinks followed on the way to a file at most: Linux's own limit
   (MAXSYMLINKS), past which it reports a loop. */
#define LT_MAX_LINKS 40

static const char *file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISFIFO(mode)) return "FIFO";
  return "socket";
}

/* torch._resolve_links(path) -> the path that path's symlinks lead to, and
   what is there: 'file', 'directory', 'character device', 'block device',
   'FIFO', 'socket', or 'none' (nothing yet: a new file, a dangling link);
   nil and the reason when the links loop or cannot be read. Chains and
   dangling links are followed as the kernel would, relative to each link's
   folder, so that a file written beside the result and renamed over it
   replaces what the link names and leaves the link be. */
static int s_resolve_links(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  char at[PATH_MAX], link[PATH_MAX];
  struct stat st;
  if (len >= sizeof at) return fail_with(L, ENAMETOOLONG);
  memcpy(at, path, len + 1);
  const char *kind;
  for (int links = 0;; links++) {
    if (lstat(at, &st) != 0) { kind = "none"; break; }
    if (!S_ISLNK(st.st_mode)) { kind = file_kind(st.st_mode); break; }
    if (links == LT_MAX_LINKS) return fail_with(L, ELOOP);
    ssize_t n = readlink(at, link, sizeof link - 1);
    if (n < 0) return fail_with(L, errno);
    link[n] = '\0';
    const char *slash = strrchr(at, '/');
    size_t folder = link[0] == '/' || !slash ? 0 : (size_t)(slash - at) + 1;
    if (folder + (size_t)n >= sizeof at) return fail_with(L, ENAMETOOLONG);
    memcpy(at + folder, link, (size_t)n + 1);
  }
  lua_pushstring(L, at);
  lua_pushstring(L, kind);
  return 2;
}

/* ---- mapped files that shrink ----
   mt_mapguard puts zeros in place of a page a mapped file has lost and calls
   on_loss from the signal handler, on whichever thread read the page. on_loss
   arms a hook on the main Lua thread, as th's Ctrl-C does, and the hook
   raises when the op returns, at the user's line. Only the main thread is
   sure to be alive then, so an op in a coroutine is reported when the main
   thread runs again (its coroutine.resume returns). */
static lua_State *main_thread;
static lua_Hook saved_hook;                       /* the hook loss_hook stands in for */
static int saved_mask, saved_count;

static void loss_hook(lua_State *L, lua_Debug *ar) {
  lua_sethook(L, saved_hook, saved_mask, saved_count);
  char path[1024];
  if (!mt_mapguard_take_loss(path, sizeof path)) return;
  const char *op = NULL;                          /* the C function returning, unless internal */
  if (ar->event == LUA_HOOKRET && lua_getinfo(L, "nS", ar) && ar->what[0] == 'C' && ar->name && ar->name[0] != '_')
    op = ar->name;
  lua_Debug user;
  if (lt_user_frame(L, &user)) lua_pushfstring(L, "%s:%d: ", user.short_src, user.currentline);
  else lua_pushliteral(L, "");
  lua_pushfstring(L, "%s%smapped file %s was truncated after loading (or could not be read): the tensor data "
                  "it lost reads as zeros", op ? op : "", op ? ": " : "", path);
  lua_concat(L, 2);
  lua_error(L);
}

static void on_loss(void) {
  lua_State *L = main_thread;
  if (!L || lua_gethook(L) == loss_hook) return;
  saved_hook = lua_gethook(L);
  saved_mask = lua_gethookmask(L);
  saved_count = lua_gethookcount(L);
  lua_sethook(L, loss_hook, LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static const luaL_Reg functions[] = {
  {"_tensor_bytes", s_tensor_bytes}, {"_tensor_from_bytes", s_tensor_from_bytes},
  {"_write_tensor", s_write_tensor}, {"_file_tensors", s_file_tensors},
  {"_crc32", s_crc32}, {"_fsync", s_fsync}, {"_resolve_links", s_resolve_links},
  {NULL, NULL}};

void lt_open_serialize(lua_State *L) {
  lt_setfuncs(L, NULL, functions);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main_thread = lua_tothread(L, -1);
  lua_pop(L, 1);
  mt_mapguard_on_loss(on_loss);
}
