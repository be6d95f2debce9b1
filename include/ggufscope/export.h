/* What the shared library exports: the functions its public headers declare with GGUFSCOPE_API. Everything else
 * is compiled with hidden visibility (CMakeLists.txt), so internals never collide with another library's names. */
#ifndef GGUFSCOPE_EXPORT_H
#define GGUFSCOPE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GGUFSCOPE_API __attribute__((visibility("default")))
#else
#define GGUFSCOPE_API
#endif

#endif
