/* lt_lapack.c: the LAPACK kernels (src/tensor/mt_lapack.h) as torch._lapack_*
   functions, the primitives lib/torch/linalg.lua builds Torch7's and
   PyTorch's linear algebra on. Each takes its tensors, its LAPACK options
   as one-letter strings, and last the name of the Lua function the user
   called, which every error names. */
#include <string.h>
#include "lt.h"
#include "../tensor/mt_lapack.h"

/* Raises msg at the user's line: the first frame outside lib/torch, as the
   user called torch.linalg.solve and not the library's helper. */
static int raise_at_user(lua_State *L, const char *msg) {
  lua_Debug user;
  if (lt_user_frame(L, &user)) lua_pushfstring(L, "%s:%d: %s", user.short_src, user.currentline, msg);
  else lua_pushstring(L, msg);
  return lua_error(L);
}

#define LAPACK_TRY(L, call) do { if ((call) != 0) raise_at_user(L, mt_error()); } while (0)

/* torch._lapack_error(msg): the library's own argument errors, raised the same way */
static int l_error(lua_State *L) { return raise_at_user(L, luaL_checkstring(L, 1)); }

static const char *op_name(lua_State *L, int i) { return luaL_checkstring(L, i); }

/* a one-letter LAPACK option ('U', 'N', ...); the kernel checks its value */
static char letter(lua_State *L, int i) {
  size_t n;
  const char *s = luaL_checklstring(L, i, &n);
  return n == 1 ? s[0] : '?';
}

/* torch._lapack_getrf(A, op) -> lu, piv, info */
static int l_getrf(lua_State *L) {
  const char *op = op_name(L, 2);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *lu = lt_push(L), *piv = lt_push(L), *info = lt_push(L);
  LAPACK_TRY(L, mt_lapack_getrf(op, lu, piv, info, a));
  return 3;
}

/* torch._lapack_gesv(A, B, op) -> x, lu, piv */
static int l_gesv(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op), *b = lt_check(L, 2, op);
  mt_tensor *x = lt_push(L), *lu = lt_push(L), *piv = lt_push(L);
  LAPACK_TRY(L, mt_lapack_gesv(op, x, lu, piv, a, b));
  return 3;
}

/* torch._lapack_trtrs(A, B, uplo, trans, diag, op) -> x */
static int l_trtrs(lua_State *L) {
  const char *op = op_name(L, 6);
  mt_tensor *a = lt_check(L, 1, op), *b = lt_check(L, 2, op);
  mt_tensor *x = lt_push(L);
  LAPACK_TRY(L, mt_lapack_trtrs(op, x, a, b, letter(L, 3), letter(L, 4), letter(L, 5)));
  return 1;
}

/* torch._lapack_gels(A, B, op) -> x */
static int l_gels(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op), *b = lt_check(L, 2, op);
  mt_tensor *x = lt_push(L);
  LAPACK_TRY(L, mt_lapack_gels(op, x, a, b));
  return 1;
}

/* torch._lapack_syevd(A, jobz, uplo, op) -> w, v */
static int l_syevd(lua_State *L) {
  const char *op = op_name(L, 4);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *w = lt_push(L), *v = lt_push(L);
  LAPACK_TRY(L, mt_lapack_syevd(op, w, v, a, letter(L, 2), letter(L, 3)));
  return 2;
}

/* torch._lapack_geev(A, jobvr, op) -> w (n x 2), v */
static int l_geev(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *w = lt_push(L), *v = lt_push(L);
  LAPACK_TRY(L, mt_lapack_geev(op, w, v, a, letter(L, 2)));
  return 2;
}

/* torch._lapack_gesdd(A, jobz, op) -> u, s, vt */
static int l_gesdd(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *u = lt_push(L), *s = lt_push(L), *vt = lt_push(L);
  LAPACK_TRY(L, mt_lapack_gesdd(op, u, s, vt, a, letter(L, 2)));
  return 3;
}

/* torch._lapack_potrf(A, uplo, op) -> the factor */
static int l_potrf(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *c = lt_push(L);
  LAPACK_TRY(L, mt_lapack_potrf(op, c, a, letter(L, 2)));
  return 1;
}

/* torch._lapack_potrs(B, chol, uplo, op) -> x */
static int l_potrs(lua_State *L) {
  const char *op = op_name(L, 4);
  mt_tensor *b = lt_check(L, 1, op), *c = lt_check(L, 2, op);
  mt_tensor *x = lt_push(L);
  LAPACK_TRY(L, mt_lapack_potrs(op, x, b, c, letter(L, 3)));
  return 1;
}

/* torch._lapack_potri(chol, uplo, op) -> the inverse */
static int l_potri(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *c = lt_check(L, 1, op);
  mt_tensor *r = lt_push(L);
  LAPACK_TRY(L, mt_lapack_potri(op, r, c, letter(L, 2)));
  return 1;
}

/* torch._lapack_pstrf(A, uplo, tol, op) -> the factor, piv (int32, 1-based) */
static int l_pstrf(lua_State *L) {
  const char *op = op_name(L, 4);
  mt_tensor *a = lt_check(L, 1, op);
  double tol = luaL_checknumber(L, 3);
  mt_tensor *c = lt_push(L), *piv = lt_push(L);
  LAPACK_TRY(L, mt_lapack_pstrf(op, c, piv, a, letter(L, 2), tol));
  return 2;
}

/* torch._lapack_geqrf(A, op) -> a, tau */
static int l_geqrf(lua_State *L) {
  const char *op = op_name(L, 2);
  mt_tensor *a = lt_check(L, 1, op);
  mt_tensor *qr = lt_push(L), *tau = lt_push(L);
  LAPACK_TRY(L, mt_lapack_geqrf(op, qr, tau, a));
  return 2;
}

/* torch._lapack_orgqr(a, tau, op) -> q */
static int l_orgqr(lua_State *L) {
  const char *op = op_name(L, 3);
  mt_tensor *a = lt_check(L, 1, op), *tau = lt_check(L, 2, op);
  mt_tensor *q = lt_push(L);
  LAPACK_TRY(L, mt_lapack_orgqr(op, q, a, tau));
  return 1;
}

/* torch._lapack_ormqr(a, tau, c, side, trans, op) -> the product */
static int l_ormqr(lua_State *L) {
  const char *op = op_name(L, 6);
  mt_tensor *a = lt_check(L, 1, op), *tau = lt_check(L, 2, op), *c = lt_check(L, 3, op);
  mt_tensor *r = lt_push(L);
  LAPACK_TRY(L, mt_lapack_ormqr(op, r, a, tau, c, letter(L, 4), letter(L, 5)));
  return 1;
}

static const luaL_Reg functions[] = {
  {"_lapack_error", l_error}, {"_lapack_getrf", l_getrf}, {"_lapack_gesv", l_gesv}, {"_lapack_trtrs", l_trtrs},
  {"_lapack_gels", l_gels}, {"_lapack_syevd", l_syevd}, {"_lapack_geev", l_geev}, {"_lapack_gesdd", l_gesdd},
  {"_lapack_potrf", l_potrf}, {"_lapack_potrs", l_potrs}, {"_lapack_potri", l_potri}, {"_lapack_pstrf", l_pstrf},
  {"_lapack_geqrf", l_geqrf}, {"_lapack_orgqr", l_orgqr}, {"_lapack_ormqr", l_ormqr}, {NULL, NULL}};

void lt_open_lapack(lua_State *L) { lt_setfuncs(L, NULL, functions); }
