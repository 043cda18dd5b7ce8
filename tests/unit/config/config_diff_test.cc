#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "config/config.h"

using namespace sw::config;

namespace {

const std::string kBase =
    "listen: { host: 127.0.0.1, port: 6432 }\n"
    "workers: 2\n"
    "auth: { method: md5, users: [ { name: app, password: a } ] }\n"
    "pool: { size: 10 }\n"
    "shards: [ { name: s0, dsn: 'host=a' }, { name: s1, dsn: 'host=b' } ]\n"
    "sharding: { tables: [ { name: orders, key: tenant_id } ] }\n";

Config load(const std::string& yaml) { return load_string(yaml, "shardwire.yaml"); }

// kBase with the first occurrence of `from` replaced by `to`.
Config load_with(const std::string& from, const std::string& to) {
  std::string yaml = kBase;
  size_t at = yaml.find(from);
  REQUIRE(at != std::string::npos);
  return load(yaml.replace(at, from.size(), to));
}

bool has(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

TEST_CASE("identical configs have no differences") {
  ConfigDiff d = diff(load(kBase), load(kBase));
  CHECK(d.changed.empty());
  CHECK(d.need_restart.empty());
}

TEST_CASE("settings a running proxy can apply") {
  ConfigDiff d = diff(load(kBase), load_with("size: 10", "size: 11, idle_timeout: 5s"));
  CHECK(d.changed == std::vector<std::string>{"pool.size", "pool.idle_timeout"});
  CHECK(d.need_restart.empty());

  ConfigDiff users = diff(load(kBase), load_with("password: a", "password: b"));
  CHECK(users.changed == std::vector<std::string>{"auth.users"});

  ConfigDiff shards = diff(load(kBase), load_with("host=b", "host=c"));
  CHECK(shards.changed == std::vector<std::string>{"shards"});

  ConfigDiff tables = diff(load(kBase), load_with("key: tenant_id", "key: tenant_id, type: text"));
  CHECK(tables.changed == std::vector<std::string>{"sharding.tables"});
  CHECK(tables.need_restart.empty());
}

TEST_CASE("listen.* and workers need a restart") {
  ConfigDiff port = diff(load(kBase), load_with("port: 6432", "port: 6433"));
  CHECK(port.changed == std::vector<std::string>{"listen.port"});
  CHECK(port.need_restart == std::vector<std::string>{"listen.port"});

  ConfigDiff host = diff(load(kBase), load_with("host: 127.0.0.1", "host: 0.0.0.0"));
  CHECK(host.need_restart == std::vector<std::string>{"listen.host"});

  ConfigDiff workers = diff(load(kBase), load_with("workers: 2", "workers: 4"));
  CHECK(workers.need_restart == std::vector<std::string>{"workers"});

  ConfigDiff both = diff(load(kBase), load_with("workers: 2\n", "workers: 3\nlog_level: debug\n"));
  CHECK(has(both.changed, "workers"));
  CHECK(has(both.changed, "log_level"));
  CHECK(both.need_restart == std::vector<std::string>{"workers"});
}

TEST_CASE("derived defaults count as changes") {
  // Reordering shards changes the default shard (the first one) and the shard list.
  Config a = load(kBase);
  Config b = load_with("[ { name: s0, dsn: 'host=a' }, { name: s1, dsn: 'host=b' } ]",
                       "[ { name: s1, dsn: 'host=b' }, { name: s0, dsn: 'host=a' } ]");
  ConfigDiff d = diff(a, b);
  CHECK(has(d.changed, "shards"));
  CHECK(has(d.changed, "sharding.default_shard"));
  CHECK(d.need_restart.empty());
}
