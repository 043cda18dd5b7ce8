// A pull reader over libpg_query's JSON parse tree (internal to sw_parser).
//
// It walks the text in place: no DOM, no allocation except for strings that hold escapes.
// Usage: begin_object(), then `while (next_key(key)) { read or skip the value }`; arrays alike
// with begin_array()/next_element(). next_key/next_element return false at the closing bracket
// (consuming it) or on malformed input; malformed input also makes ok() false for good, and
// every later call then fails, so callers check ok() once at the end. Skipping is iterative, so
// deep trees cannot exhaust the stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sw::parser::detail {

class JsonReader {
 public:
  explicit JsonReader(std::string_view json) : json_(json) {}

  bool ok() const { return ok_; }

  bool begin_object();
  // The next key of the current object; the view lives until the next call on this reader.
  bool next_key(std::string_view& key);
  bool begin_array();
  bool next_element();

  bool read_string(std::string& out);
  bool read_int(int64_t& out);
  bool read_bool(bool& out);
  bool skip_value();

  // Decodes the raw contents of a JSON string (the text between its quotes); json_tree.h
  // decodes strings with it.
  static bool unescape(std::string_view raw, std::string& out);

 private:
  bool fail();
  void skip_space();
  bool consume(char c);
  // Reads a string token; the result views the input or `scratch_` when it had escapes.
  bool string_token(std::string_view& out);

  std::string_view json_;
  size_t pos_ = 0;
  bool ok_ = true;
  bool need_comma_ = false;  // a value was read inside the current container
  std::string scratch_;
};

}  // namespace sw::parser::detail
