// Sanitizer builds only (SHARDWIRE_SANITIZE, SHARDWIRE_TSAN): instrumented code needs several
// times the stack of a release build, and civetweb (the HTTP server under prometheus-cpp's
// exposer) gives each of its threads a fixed 100 KiB stack, which ASan's printf interceptor
// alone overflows while /metrics is served. This definition takes the place of libc's for every
// caller in the process and raises any requested stack size to at least 1 MiB. Release builds
// do not contain it.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

namespace {
constexpr size_t kMinimumStack = size_t{1} << 20;
using SetStackSize = int (*)(pthread_attr_t*, size_t);
}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  static const auto libc = reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return libc(attr, std::max(size, kMinimumStack));
}
