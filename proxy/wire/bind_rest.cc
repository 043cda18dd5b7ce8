// A Bind's fields after the statement name (see bind_rest.h).
#include "wire/bind_rest.h"

#include <utility>

#include "wire/byte_reader.h"
#include "wire/message_writer.h"

namespace sw::wire {
namespace {

constexpr uint32_t kNullLength = 0xffffffffu;  // int32 -1: NULL
constexpr uint32_t kMaxLength = 0x7fffffffu;
constexpr size_t kMaxCount = 0xffff;

// `count` format codes, each handed to `take`; skipped whole when nothing collects them.
template <bool kCollects, typename Take>
bool read_codes(ByteReader& r, uint16_t count, Take take) {
  if constexpr (!kCollects) {
    return r.skip(uint64_t{count} * 2);
  } else {
    for (uint16_t i = 0; i < count; ++i) {
      uint16_t code = 0;
      if (!r.u16(code)) return false;
      take(code);
    }
    return true;
  }
}

// Walks the fields in order, handing each to the visitor: format(code), value(optional bytes),
// parameters(bytes of both), result_format(code), the last only `with_results`. False with the
// reason in `*why` when the bytes are malformed (nothing is built when they are not: decode_bind
// runs this on every Bind).
template <typename Visitor>
bool walk(std::string_view rest, bool with_results, Visitor& visit, std::string* why) {
  auto fail = [why](std::string reason) {
    *why = std::move(reason);
    return false;
  };
  ByteReader r(rest);
  uint16_t formats = 0;
  if (!r.u16(formats) ||
      !read_codes<Visitor::kCollects>(r, formats, [&visit](uint16_t code) { visit.format(code); }))
    return fail("parameter format codes truncated");
  uint16_t params = 0;
  if (!r.u16(params)) return fail("parameter count missing");
  if (formats > 1 && formats != params) {
    return fail(std::to_string(formats) + " parameter formats but " + std::to_string(params) + " parameters");
  }
  for (uint32_t i = 0; i < params; ++i) {
    uint32_t length = 0;
    if (!r.u32(length)) return fail("parameter " + std::to_string(i + 1) + " length missing");
    std::string_view value;
    if (length == kNullLength) {
      visit.value(std::nullopt);
      continue;
    }
    if (length > kMaxLength || !(Visitor::kCollects ? r.bytes(length, value) : r.skip(length))) {
      return fail("parameter " + std::to_string(i + 1) + " has invalid length");
    }
    visit.value(value);
  }
  visit.parameters(rest.substr(0, r.position()));
  if (!with_results) return r.at_end() || fail("unexpected bytes after the last parameter");
  uint16_t results = 0;
  if (!r.u16(results) ||
      !read_codes<Visitor::kCollects>(r, results, [&visit](uint16_t code) { visit.result_format(code); }))
    return fail("result format codes truncated");
  return r.at_end() || fail("unexpected bytes after the last field");
}

struct Check {
  static constexpr bool kCollects = false;
  void format(uint16_t) {}
  void value(std::optional<std::string_view>) {}
  void parameters(std::string_view) {}
  void result_format(uint16_t) {}
};

struct Collect {
  static constexpr bool kCollects = true;
  BindRest& out;
  void format(uint16_t code) { out.param_formats.push_back(code); }
  void value(std::optional<std::string_view> bytes) { out.values.push_back(bytes); }
  void parameters(std::string_view bytes) { out.parameters = bytes; }
  void result_format(uint16_t code) { out.result_formats.push_back(code); }
};

void write_codes(MessageWriter& w, const std::vector<uint16_t>& codes) {
  w.int16(static_cast<uint16_t>(codes.size()));
  for (uint16_t code : codes) w.int16(code);
}

Result<BindRest> decode(std::string_view bytes, bool with_results) {
  BindRest out;
  Collect collect{out};
  if (std::string why; !walk(bytes, with_results, collect, &why)) {
    return Status::client("08P01", "invalid Bind message: " + why);
  }
  return out;
}

// Written through an untyped MessageWriter frame into scratch, so its sticky failure covers
// every field; the fields alone (without the length word) are then appended.
void encode(std::string& out, const BindRest& bind, bool with_results) {
  if (bind.param_formats.size() > kMaxCount || bind.values.size() > kMaxCount ||
      bind.result_formats.size() > kMaxCount)
    return;
  for (const auto& value : bind.values) {
    if (value && value->size() > kMaxLength) return;
  }
  std::string fields;
  MessageWriter w(fields);
  w.begin_untyped();
  write_codes(w, bind.param_formats);
  w.int16(static_cast<uint16_t>(bind.values.size()));
  for (const auto& value : bind.values) {
    if (!value) {
      w.int32(kNullLength);
      continue;
    }
    w.int32(static_cast<uint32_t>(value->size())).bytes(*value);
  }
  if (with_results) write_codes(w, bind.result_formats);
  w.end();
  if (w.ok()) out.append(std::string_view(fields).substr(4));
}

}  // namespace

bool bind_rest_is_well_formed(std::string_view rest, std::string* why) {
  Check check;
  return walk(rest, true, check, why);
}

Result<BindRest> decode_bind_rest(std::string_view rest) { return decode(rest, true); }
Result<BindRest> decode_bind_parameters(std::string_view parameters) { return decode(parameters, false); }
void encode_bind_rest(std::string& out, const BindRest& bind) { encode(out, bind, true); }
void encode_bind_parameters(std::string& out, const BindRest& bind) { encode(out, bind, false); }

}  // namespace sw::wire
