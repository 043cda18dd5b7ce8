#include "mover/binary_tuple_counter.h"

#include <algorithm>

#include "wire/byte_reader.h"

namespace sw::mover {

uint64_t BinaryTupleCounter::feed(const char* data, size_t size) {
  uint64_t tuples = 0;
  size_t at = 0;
  while (at < size && expect_ != Expect::End) {
    if (expect_ == Expect::HeaderExtension || expect_ == Expect::FieldData) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(skip_, size - at));
      at += take;
      skip_ -= take;
      if (skip_ == 0) {
        if (expect_ == Expect::HeaderExtension)
          expect_ = Expect::FieldCount;
        else
          field_done(&tuples);
      }
      continue;
    }
    const size_t need = expect_ == Expect::Header ? 19 : expect_ == Expect::FieldCount ? 2 : 4;
    const size_t take = std::min(need - partial_.size(), size - at);
    partial_.append(data + at, take);
    at += take;
    if (partial_.size() == need) {
      fixed_item_done(&tuples);
      partial_.clear();
    }
  }
  return tuples;
}

// partial_ holds exactly the item's bytes: the reads below cannot fail.
void BinaryTupleCounter::fixed_item_done(uint64_t* tuples) {
  wire::ByteReader item(partial_);
  if (expect_ == Expect::Header) {
    uint32_t extension = 0;
    item.skip(15);  // signature and flags
    item.u32(extension);
    skip_ = extension;
    expect_ = skip_ ? Expect::HeaderExtension : Expect::FieldCount;
  } else if (expect_ == Expect::FieldCount) {
    int16_t count = 0;
    item.i16(count);
    if (count < 0) {
      expect_ = Expect::End;
    } else if (count == 0) {
      ++*tuples;
    } else {
      fields_left_ = count;
      expect_ = Expect::FieldLength;
    }
  } else {  // FieldLength
    int32_t length = 0;
    item.i32(length);
    if (length > 0) {
      skip_ = static_cast<uint64_t>(length);
      expect_ = Expect::FieldData;
    } else {
      field_done(tuples);
    }
  }
}

void BinaryTupleCounter::field_done(uint64_t* tuples) {
  if (--fields_left_ > 0) {
    expect_ = Expect::FieldLength;
  } else {
    ++*tuples;
    expect_ = Expect::FieldCount;
  }
}

}  // namespace sw::mover
