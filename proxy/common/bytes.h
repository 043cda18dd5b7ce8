// Big-endian integer helpers for the PostgreSQL wire format, and buffer trimming.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sw {

inline uint32_t load_be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

inline uint16_t load_be16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}

inline void store_be32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

inline void append_be32(std::string& out, uint32_t v) {
  char b[4];
  store_be32(b, v);
  out.append(b, 4);
}

inline void append_be16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

// An empty buffer whose capacity grew past `keep` bytes (for one large message) gives the memory
// back, so a connection that goes idle after a big query or result does not keep it.
inline void release_if_large(std::string& buffer, size_t keep) {
  if (buffer.empty() && buffer.capacity() > keep) std::string().swap(buffer);
}

}  // namespace sw
