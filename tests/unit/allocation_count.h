// Counting heap allocations in a unit test. The header replaces the global operator new, so a test
// binary includes it from exactly one of its files; that file then counts the operator new calls
// this thread makes between start_counting_allocations() and stop_counting_allocations().
// Sanitizer runtimes replace operator new themselves: the count exists only in plain builds, and
// tests that use it go inside `#if SW_COUNTS_ALLOCATIONS`.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SW_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SW_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef SW_COUNTS_ALLOCATIONS
#define SW_COUNTS_ALLOCATIONS 1
#endif

#if SW_COUNTS_ALLOCATIONS

namespace sw::test {

inline thread_local bool counting_allocations = false;
inline thread_local uint64_t allocations_counted = 0;

inline void start_counting_allocations() {
  allocations_counted = 0;
  counting_allocations = true;
}

// The operator new calls of this thread since start_counting_allocations().
inline uint64_t stop_counting_allocations() {
  counting_allocations = false;
  return allocations_counted;
}

}  // namespace sw::test

// Not inlined: gcc would see free() of memory from operator new (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(size_t size) {
  if (sw::test::counting_allocations) ++sw::test::allocations_counted;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, size_t) noexcept { std::free(memory); }

#endif  // SW_COUNTS_ALLOCATIONS
