// Helpers shared by the libFuzzer targets in tests/fuzz.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

namespace sw::fuzz {

// An invariant of the code under test. A violation aborts, which libFuzzer reports as a crash
// and saves the input; the message says which invariant broke.
[[noreturn]] inline void invariant_failed(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n", file, line, what);
  std::abort();
}
#define FUZZ_CHECK(cond)                                                  \
  do {                                                                    \
    if (!(cond)) ::sw::fuzz::invariant_failed(__FILE__, __LINE__, #cond); \
  } while (0)

// A copy of `bytes` in a heap block of exactly that size. Decoders are handed views into it so
// AddressSanitizer catches a read even one byte past the end; a view into the middle of the
// fuzzer's input would let such a read land silently on the next bytes.
class ExactCopy {
 public:
  explicit ExactCopy(std::string_view bytes) : size_(bytes.size()), data_(new char[bytes.size()]) {
    if (size_ > 0) std::memcpy(data_.get(), bytes.data(), size_);
  }
  // Empty input: a 0-byte block, never nullptr, so a read without a size check is caught too.
  std::string_view view() const { return std::string_view(data_.get(), size_); }

 private:
  size_t size_;
  std::unique_ptr<char[]> data_;
};

// Splits a fuzzer input into records, each prefixed by a 2-byte big-endian length (a length past
// the end takes what is left). Lets one input drive a sequence of messages through a stateful
// decoder while mutations stay local to one record.
class RecordSplitter {
 public:
  explicit RecordSplitter(std::string_view input) : rest_(input) {}
  bool next(std::string_view& record) {
    if (rest_.size() < 2) return false;
    const size_t length = (static_cast<unsigned char>(rest_[0]) << 8) | static_cast<unsigned char>(rest_[1]);
    rest_.remove_prefix(2);
    record = rest_.substr(0, length);
    rest_.remove_prefix(record.size());
    return true;
  }

 private:
  std::string_view rest_;
};

}  // namespace sw::fuzz
