// Entry points of sw_config: load_file/load_string (YAML -> read_document -> validate), the
// ConfigError text, and the small lookups on the config structs.
//
// ConfigError::what() reads "<file>:<line>: <key>: <message>"; the line is left out when it is
// unknown (0) and the key when there is none (a YAML syntax error).
#include "config/config.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/loader.h"

namespace sw::config {
namespace {

std::string error_text(const std::string& file, int line, const std::string& key,
                       const std::string& message) {
  std::string text = file;
  if (line > 0) {
    text += ':';
    text += std::to_string(line);
  }
  text += ": ";
  if (!key.empty()) text += key + ": ";
  text += message;
  return text;
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, std::string key, const std::string& message)
    : std::runtime_error(error_text(file, line, key, message)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)) {}

const User* Auth::find(const std::string& name) const {
  for (const User& user : users) {
    if (user.name == name) return &user;
  }
  return nullptr;
}

std::vector<std::string> Config::shard_names() const {
  std::vector<std::string> names;
  names.reserve(shards.size());
  for (const Shard& shard : shards) names.push_back(shard.name);
  return names;
}

const Shard* Config::find_shard(const std::string& name) const {
  for (const Shard& shard : shards) {
    if (shard.name == name) return &shard;
  }
  return nullptr;
}

Config load_string(const std::string& text, const std::string& file_name) {
  detail::LoadContext ctx(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.what() would repeat the position.
    int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    throw ConfigError(file_name, line, "", "YAML syntax error: " + e.msg);
  }
  Config cfg;
  cfg.file = file_name;
  try {
    detail::read_document(root, ctx, cfg);
  } catch (const YAML::Exception& e) {
    // Not expected (the readers avoid converting throws), but never let one escape untyped.
    int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    throw ConfigError(file_name, line, "", e.msg);
  }
  std::string base_dir = std::filesystem::path(file_name).parent_path().string();
  detail::validate(cfg, ctx, base_dir);
  return cfg;
}

Config load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ConfigError(path, 0, "", std::string("cannot read: ") + std::strerror(errno));
  return load_string(buffer.str(), path);
}

}  // namespace sw::config
