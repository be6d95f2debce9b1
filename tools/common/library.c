/* libggufscope.so is gguf/, quant/ and audit/ linked whole (CMakeLists.txt); a shared library needs one
 * source of its own, and this one says which version it is. */
#include "gguf.h"

const char *ggufscope_library_version(void)
{
    return GGUFSCOPE_LIBRARY_VERSION;
}
