// Decoding a Bind message's parameter values (see bind_values.h).
#include "wire/bind_values.h"

#include <string>

#include "wire/byte_reader.h"

namespace sw::wire {
namespace {

Status malformed(const std::string& what) {
  return Status::client("08P01", "malformed Bind message: " + what);
}

// Format codes: none (all text), one for all, or one per parameter (checked by the caller).
Result<std::vector<int16_t>> read_formats(ByteReader& in) {
  int16_t count = 0;
  if (!in.i16(count) || count < 0) return malformed("parameter format codes");
  std::vector<int16_t> formats(static_cast<size_t>(count));
  for (int16_t& format : formats) {
    if (!in.i16(format)) return malformed("parameter format codes");
  }
  return formats;
}

Result<BindValues> decode(std::string_view rest, std::vector<uint32_t> param_types) {
  ByteReader in(rest);
  Result<std::vector<int16_t>> formats = read_formats(in);
  if (!formats.is_ok()) return formats.status();
  const std::vector<int16_t>& codes = formats.value();
  int16_t param_count = 0;
  if (!in.i16(param_count) || param_count < 0) return malformed("parameter count");
  if (codes.size() > 1 && codes.size() != static_cast<size_t>(param_count)) {
    return malformed("format code count does not match the parameter count");
  }
  BindValues values;
  values.types = std::move(param_types);
  values.params.resize(static_cast<size_t>(param_count));
  for (size_t i = 0; i < values.params.size(); ++i) {
    BindParam& param = values.params[i];
    const int16_t format = codes.empty() ? 0 : codes[codes.size() == 1 ? 0 : i];
    // Checked where PostgreSQL checks it (exec_bind_message), with its error: a format code is
    // well-formed structure (decode_bind accepts it), only an unusable value.
    if (format != 0 && format != 1) {
      return Status::client("22023", "unsupported format code: " + std::to_string(format));
    }
    param.binary = format == 1;
    int32_t length = 0;
    if (!in.i32(length) || length < -1) return malformed("parameter length");
    if (length == -1) {
      param.null = true;
    } else if (!in.bytes(static_cast<uint64_t>(length), param.bytes)) {
      return malformed("parameter value");
    }
  }
  return values;
}

}  // namespace

Result<BindValues> decode_bind_values(std::string_view rest, std::vector<uint32_t> param_types) {
  try {
    return decode(rest, std::move(param_types));
  } catch (...) {  // allocation failure
    return Status::proxy("53200", "out of memory while decoding Bind parameters");
  }
}

}  // namespace sw::wire
