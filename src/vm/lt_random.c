/* lt_random.c: Lua bindings of the random ops. */
#include "lt.h"

void lt_open_random(lua_State *L) { lt_setfuncs(L, NULL, NULL); }
