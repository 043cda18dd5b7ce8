// Counts the rows of a binary COPY stream as it passes through the mover's copy (docs/architecture.md
// §8.3), for its progress and its throttle, without copying or decoding the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sw::mover {

// Counts complete tuples in a binary COPY stream fed in arbitrary pieces: the 19-byte header
// (signature, flags, extension length) and its extension, then per tuple an int16 field count
// (-1 ends the stream) and per field an int32 length (-1 = NULL) plus that many bytes.
class BinaryTupleCounter {
 public:
  // The tuples that the piece completes.
  uint64_t feed(const char* data, size_t size);

 private:
  enum class Expect { Header, HeaderExtension, FieldCount, FieldLength, FieldData, End };
  void fixed_item_done(uint64_t* tuples);
  void field_done(uint64_t* tuples);

  Expect expect_ = Expect::Header;
  std::string partial_;  // a fixed-size item split across pieces
  uint64_t skip_ = 0;    // bytes of header extension or field data still to pass over
  int fields_left_ = 0;
};

}  // namespace sw::mover
