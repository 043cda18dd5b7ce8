#include "config/env_expand.h"

#include <cctype>
#include <cstdlib>

namespace sw::config::detail {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

const char* from_environment(const char* name) { return std::getenv(name); }

}  // namespace

Expanded expand_env(const std::string& text, const char* (*lookup)(const char*)) {
  if (lookup == nullptr) lookup = from_environment;
  Expanded out;
  size_t at = 0;
  while (at < text.size()) {
    size_t dollar = text.find('$', at);
    if (dollar == std::string::npos) {
      out.text.append(text, at, std::string::npos);
      break;
    }
    out.text.append(text, at, dollar - at);
    if (text.compare(dollar, 3, "$${") == 0) {  // escaped: a literal "${"
      out.text += "${";
      at = dollar + 3;
      continue;
    }
    if (text.compare(dollar, 2, "${") != 0) {  // a lone '$' (SCRAM verifiers hold several)
      out.text += '$';
      at = dollar + 1;
      continue;
    }
    size_t close = text.find('}', dollar + 2);
    if (close == std::string::npos) {
      out.error = "has \"${\" without a closing \"}\" (write \"$${\" for a literal \"${\")";
      return out;
    }
    std::string name = text.substr(dollar + 2, close - dollar - 2);
    if (!valid_name(name)) {
      out.error = "refers to ${" + name + "}, which is not a variable name (letters, digits, '_')";
      return out;
    }
    const char* value = lookup(name.c_str());
    if (value == nullptr) {
      out.error = "refers to ${" + name + "}, which is not set in shardwire's environment";
      return out;
    }
    out.text += value;
    at = close + 1;
  }
  return out;
}

}  // namespace sw::config::detail
