// Decoding a Bind message's parameter values (see bind_values.h).
#include "wire/bind_values.h"

#include <string>

#include "wire/byte_reader.h"

namespace sw::wire {
namespace {

Status malformed(const std::string& what) {
  return Status::client("08P01", "malformed Bind message: " + what);
}

// The format code of parameter `i`: none (all text), one for all, or one per parameter (the
// count checked by the caller).
Status read_format(std::string_view codes, uint16_t count, size_t i, int16_t* format) {
  if (count == 0) {
    *format = 0;
    return Status::ok();
  }
  ByteReader in(codes.substr(count == 1 ? 0 : 2 * i));
  if (!in.i16(*format)) return malformed("parameter format codes");
  return Status::ok();
}

Status decode(std::string_view rest, const std::vector<uint32_t>& param_types, BindValues* values) {
  ByteReader in(rest);
  // Both counts are unsigned 16-bit, as PostgreSQL reads them (pq_getmsgint): up to 65535.
  uint16_t format_count = 0;
  if (!in.u16(format_count)) return malformed("parameter format codes");
  std::string_view codes;
  if (!in.bytes(2 * static_cast<uint64_t>(format_count), codes)) return malformed("parameter format codes");
  uint16_t param_count = 0;
  if (!in.u16(param_count)) return malformed("parameter count");
  if (format_count > 1 && format_count != param_count) {
    return malformed("format code count does not match the parameter count");
  }
  values->types.assign(param_types.begin(), param_types.end());
  values->params.resize(param_count);
  for (size_t i = 0; i < values->params.size(); ++i) {
    BindParam& param = values->params[i];
    param = BindParam{};
    int16_t format = 0;
    if (Status read = read_format(codes, format_count, i, &format); !read.is_ok()) return read;
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
  return Status::ok();
}

}  // namespace

Status decode_bind_values(std::string_view rest, const std::vector<uint32_t>& param_types,
                          BindValues* values) {
  try {
    return decode(rest, param_types, values);
  } catch (...) {  // allocation failure
    return Status::proxy("53200", "out of memory while decoding Bind parameters");
  }
}

Result<BindValues> decode_bind_values(std::string_view rest, const std::vector<uint32_t>& param_types) {
  BindValues values;
  Status decoded = decode_bind_values(rest, param_types, &values);
  if (!decoded.is_ok()) return decoded;
  return values;
}

}  // namespace sw::wire
