/* lt_index.c: indexing with tensors -- masks and index tensors -- and the
   index_* / gather / scatter / masked_* / where / nonzero bindings. */
#include "lt.h"

int lt_index_get_tensor(lua_State *L, mt_tensor *t, mt_tensor *key) {
  (void)t; (void)key;
  return luaL_error(L, "index: tensor keys are not supported yet");
}

void lt_index_set_tensor(lua_State *L, mt_tensor *t, mt_tensor *key, int value) {
  (void)t; (void)key; (void)value;
  luaL_error(L, "index assignment: tensor keys are not supported yet");
}

void lt_open_index(lua_State *L) { lt_setfuncs(L, NULL, NULL); }
