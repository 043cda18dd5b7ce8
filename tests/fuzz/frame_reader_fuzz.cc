// Fuzz target: the v3 frame reader (read_frame, read_startup_packet), the decoders of the
// messages the proxy looks inside (wire/messages.h, wire/row_description.h, wire/bind_rest.h),
// and Bind parameters as the router hashes them into buckets (wire::decode_bind_values,
// bucket_of_text_value and bucket_of_binary_value).
//
// Input: byte 0 picks the sender (bit 0: server) and the message size limit (bit 1: a tiny
// max_message_size of 64, so the limit checks are reached with small inputs); the rest is a byte
// stream read frame after frame, as a session reads its input buffer.
//
// Invariants checked for every frame:
//  * a complete frame lies inside the input, its body is the bytes after the 5-byte header and
//    its size respects the limit for its type;
//  * "need more" always asks for more than is buffered and never for more than the limit allows
//    (a peer cannot make the proxy buffer past the limit by announcing a huge length);
//  * every prefix of a complete frame reads as "need more" (split reads agree with whole reads);
//  * a decoder that accepts a body re-encodes it to the exact same frame bytes;
//  * a Bind that decode_bind accepts has fields that decode_bind_rest takes apart and
//    encode_bind_rest puts back together byte for byte;
//  * a Bind that decode_bind accepts is accepted by the router's decode_bind_values (a format
//    code other than 0/1 aside: 22023, as PostgreSQL), and each parameter that is a valid
//    int2/int4/int8/uuid/text key hashes to the same bucket in its text and its binary form (the
//    proxy must route `$1` the same whichever format the driver uses).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "router/bucket_hash.h"
#include "router/router.h"
#include "wire/bind_rest.h"
#include "wire/bind_values.h"
#include "wire/copy_rows.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/row_description.h"
#include "wire/startup.h"

namespace {

using namespace sw::wire;
namespace router = sw::router;
namespace wire = sw::wire;
using sw::fuzz::ExactCopy;

constexpr uint64_t kTinyMessageLimit = 64;

bool is_small_client_type(char type) {
  return std::string_view("SHXCDcf").find(type) != std::string_view::npos;
}

void check_frame(std::string_view input, const FrameResult& result, Sender sender, const Limits& limits) {
  switch (result.status) {
    case FrameStatus::Complete: {
      const Frame& frame = result.frame;
      FUZZ_CHECK(frame.size >= 5 && frame.size <= input.size());
      FUZZ_CHECK(frame.type == input[0]);
      FUZZ_CHECK(frame.body.data() == input.data() + 5);
      FUZZ_CHECK(frame.body.size() == frame.size - 5);
      uint64_t limit = limits.max_message_size;
      if (sender == Sender::Client && is_small_client_type(frame.type)) {
        limit = Limits::kMaxSmallMessage;
      }
      FUZZ_CHECK(frame.size - 1 <= limit);  // the length word counts itself, not the type byte
      break;
    }
    case FrameStatus::NeedMore:
      FUZZ_CHECK(result.need > input.size());
      FUZZ_CHECK(result.need >= 5);
      FUZZ_CHECK(result.need - 1 <= std::max<uint64_t>(limits.max_message_size, Limits::kMaxSmallMessage));
      break;
    case FrameStatus::Error: FUZZ_CHECK(!result.error.empty()); break;
  }
}

// Every prefix of a complete frame must say "need more", asking for no more than the frame.
void check_prefixes(std::string_view input, size_t frame_size, Sender sender, const Limits& limits) {
  auto check = [&](size_t k) {
    FrameResult partial = read_frame(input.substr(0, k), sender, limits);
    FUZZ_CHECK(partial.status == FrameStatus::NeedMore);
    FUZZ_CHECK(partial.need > k && partial.need <= frame_size);
  };
  // Every split inside the header and the first bytes of the body, then the last byte missing.
  constexpr size_t kEverySplitUpTo = 64;
  for (size_t k = 0; k < frame_size && k < kEverySplitUpTo; ++k) check(k);
  if (frame_size > kEverySplitUpTo) check(frame_size - 1);
}

void check_reencoded(std::string_view frame_bytes, const std::string& encoded) {
  FUZZ_CHECK(encoded == frame_bytes);
}

// ---- Bind parameters -> buckets (the router's view of a Bind) ---------------------------------

constexpr uint32_t kBuckets = 4096;

std::string big_endian(uint64_t value, size_t bytes) {
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) out[bytes - 1 - i] = static_cast<char>(value >> (8 * i));
  return out;
}

std::string uuid_text(std::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[static_cast<unsigned char>(raw[i]) >> 4];
    out += kHex[static_cast<unsigned char>(raw[i]) & 0xf];
  }
  return out;
}

// The same key sent in text and in binary form must land in the same bucket.
void check_same_bucket(router::KeyType type, std::string_view text, std::string_view binary) {
  auto from_text = router::bucket_of_text_value(type, text, kBuckets);
  auto from_binary = router::bucket_of_binary_value(type, binary, kBuckets);
  FUZZ_CHECK(from_text.is_ok() && from_binary.is_ok());
  FUZZ_CHECK(*from_text == *from_binary && *from_text < kBuckets);
}

void check_param_buckets(const wire::BindParam& param) {
  using router::KeyType;
  const KeyType kIntTypes[] = {KeyType::Int2, KeyType::Int4, KeyType::Int8};
  const size_t kIntSizes[] = {2, 4, 8};
  if (param.binary) {
    for (size_t t = 0; t < 3; ++t) {
      if (param.bytes.size() != kIntSizes[t]) continue;
      uint64_t raw = 0;
      for (char c : param.bytes) raw = (raw << 8) | static_cast<unsigned char>(c);
      const int shift = static_cast<int>(64 - 8 * kIntSizes[t]);
      const auto value = static_cast<int64_t>(raw << shift) >> shift;  // sign-extend
      check_same_bucket(kIntTypes[t], std::to_string(value), param.bytes);
    }
    if (param.bytes.size() == 16) {
      check_same_bucket(KeyType::Uuid, uuid_text(param.bytes), param.bytes);
    }
    check_same_bucket(KeyType::Text, param.bytes, param.bytes);
    return;
  }
  for (size_t t = 0; t < 3; ++t) {
    if (auto value = router::parse_int_text(kIntTypes[t], param.bytes)) {
      check_same_bucket(kIntTypes[t], param.bytes, big_endian(static_cast<uint64_t>(*value), kIntSizes[t]));
    }
  }
  if (auto uuid = router::parse_uuid_text(param.bytes)) {
    check_same_bucket(KeyType::Uuid, param.bytes,
                      std::string_view(reinterpret_cast<const char*>(uuid->data()), uuid->size()));
  }
  check_same_bucket(KeyType::Text, param.bytes, param.bytes);
}

// decode_bind already checked the structure, so the router's decoder must accept it too; it may
// only refuse a format code that is neither text nor binary (22023, as PostgreSQL).
void check_bind_values(const BindMessage& bind) {
  ExactCopy rest(bind.rest);
  auto values = wire::decode_bind_values(rest.view(), {});
  if (!values) {
    FUZZ_CHECK(values.status().sqlstate == "22023");
    return;
  }
  for (const wire::BindParam& param : values->params) {
    if (!param.null) check_param_buckets(param);
  }
}

// The fields of a Bind that decode_bind accepts decode, and encode back to the same bytes (the
// proxy's rewritten Binds are built from them).
void check_bind_rest(const BindMessage& bind) {
  ExactCopy rest(bind.rest);
  auto fields = wire::decode_bind_rest(rest.view());
  FUZZ_CHECK(fields.is_ok());
  std::string out;
  wire::encode_bind_rest(out, *fields);
  FUZZ_CHECK(out == bind.rest);
}

void decode_client_frame(std::string_view frame_bytes, char type, std::string_view body) {
  std::string out;
  switch (type) {
    case 'P':
      if (auto m = decode_parse(body)) {
        encode_parse(out, m->statement, m->query, m->param_types);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'B':
      if (auto m = decode_bind(body)) {
        encode_bind_renamed(out, *m, m->statement);
        check_reencoded(frame_bytes, out);
        check_bind_values(*m);
        check_bind_rest(*m);
      }
      break;
    case 'E':
      if (auto m = decode_execute(body)) {
        encode_execute(out, m->portal, m->max_rows);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'C':
    case 'D':
      if (auto m = decode_target(body)) {
        encode_target(out, type, m->kind, m->name);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'Q':
      if (auto m = decode_query(body)) {
        encode_query(out, *m);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'p': {
      // The same type byte carries PasswordMessage, SASLInitialResponse and SASLResponse; which
      // one depends on the login state, so both decoders see every body.
      if (auto m = decode_password_message(body)) {
        encode_password_message(out, *m);
        check_reencoded(frame_bytes, out);
      }
      out.clear();
      if (auto m = decode_sasl_initial_response(body)) {
        FUZZ_CHECK(m->data.size() <= body.size());
        encode_sasl_initial_response(out, m->mechanism, m->data);
        auto again = decode_sasl_initial_response(std::string_view(out).substr(5));
        FUZZ_CHECK(again && again->mechanism == m->mechanism && again->data == m->data);
      }
      break;
    }
    default: break;
  }
}

void decode_server_frame(std::string_view frame_bytes, char type, std::string_view body) {
  std::string out;
  switch (type) {
    case 'R':
      if (auto m = decode_authentication(body)) {
        if (m->code == static_cast<uint32_t>(AuthRequest::SaslContinue)) {
          encode_auth_sasl_continue(out, m->data);
          check_reencoded(frame_bytes, out);
        }
      }
      break;
    case 'S':
      if (auto m = decode_parameter_status(body)) {
        encode_parameter_status(out, m->name, m->value);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'K':
      if (auto m = decode_backend_key_data(body)) {
        encode_backend_key_data(out, *m);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'Z': {
      auto m = decode_ready_for_query(body);
      FUZZ_CHECK(ready_for_query_status(body) == (m ? *m : '\0'));
      if (m) {
        encode_ready_for_query(out, *m);
        check_reencoded(frame_bytes, out);
      }
      break;
    }
    case 'C':
      if (auto m = decode_command_complete(body)) {
        encode_command_complete(out, *m);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'T':
      if (auto m = decode_row_description(body)) {
        encode_row_description(out, *m);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'E':
    case 'N':
      if (auto m = decode_error_fields(body)) FUZZ_CHECK(m->sqlstate.size() < body.size());
      if (auto fields = decode_error_field_list(body)) {
        encode_error_field_list(out, type, *fields);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'D':
      if (auto row = decode_data_row(body)) {
        std::vector<std::optional<std::string>> values;
        for (const auto& value : *row)
          values.emplace_back(value ? std::optional<std::string>(*value) : std::nullopt);
        encode_data_row(out, values);
        check_reencoded(frame_bytes, out);
      }
      break;
    case 'H':
      if (auto m = decode_copy_response(body)) FUZZ_CHECK(body.size() == 3 + 2 * size_t{m->columns});
      (void)binary_copy_header_size(body);
      break;
    default: break;
  }
}

void read_typed_stream(std::string_view stream, Sender sender, const Limits& limits) {
  while (true) {
    FrameResult result = read_frame(stream, sender, limits);
    check_frame(stream, result, sender, limits);
    if (result.status != FrameStatus::Complete) return;
    const size_t size = result.frame.size;
    check_prefixes(stream, size, sender, limits);
    ExactCopy frame_copy(stream.substr(0, size));
    ExactCopy body_copy(result.frame.body);
    if (sender == Sender::Client) {
      decode_client_frame(frame_copy.view(), result.frame.type, body_copy.view());
    } else {
      decode_server_frame(frame_copy.view(), result.frame.type, body_copy.view());
    }
    stream.remove_prefix(size);
  }
}

// The same bytes as startup-phase packets (no type byte): lengths 8..10000, then the parser.
void read_startup_stream(std::string_view stream) {
  while (true) {
    FrameResult result = read_startup_packet(stream);
    if (result.status == FrameStatus::NeedMore) {
      FUZZ_CHECK(result.need > stream.size() && result.need <= Limits::kMaxStartupPacket);
      return;
    }
    if (result.status == FrameStatus::Error) return;
    FUZZ_CHECK(result.frame.size >= 8 && result.frame.size <= stream.size());
    FUZZ_CHECK(result.frame.size <= Limits::kMaxStartupPacket);
    FUZZ_CHECK(result.frame.body.size() == result.frame.size - 4);
    ExactCopy body(result.frame.body);
    (void)parse_startup_packet(body.view());
    stream.remove_prefix(result.frame.size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const Sender sender = (mode & 1) ? Sender::Server : Sender::Client;
  Limits limits;
  if (mode & 2) limits.max_message_size = kTinyMessageLimit;
  // The stream in a block of its own size, so a read past the last frame is caught too.
  ExactCopy stream(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  read_typed_stream(stream.view(), sender, limits);
  read_startup_stream(stream.view());
  return 0;
}
