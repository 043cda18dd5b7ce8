// The config file as the operator meets it: a broken file stops start-up with file:line and key,
// the annotated example in docker/ stays valid, and a port another process listens on stops
// start-up unless listen.reuse_port shares it on purpose.
#include <csignal>
#include <sstream>

#include "it_test.h"

#ifndef SHARDWIRE_SOURCE_DIR
#define SHARDWIRE_SOURCE_DIR "."
#endif

using namespace it;

TEST_SUITE("config") {
  TEST_CASE("a broken config stops start-up with file:line and the key") {
    PROXY_ONLY();
    std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    TempDir dir;
    std::string good = render_config(ProxyOptions{}, free_port(), shared_cluster().port());
    struct Case {
      std::string needle, replacement, key;
    };
    for (const Case& c :
         {Case{"  size: ", "  size: -3", "size"}, Case{"  mode: transaction", "  mode: sideways", "mode"},
          Case{"  method: ", "  method: plaintext", "method"},
          Case{"  idle_timeout: ", "  idle_timeout: soon", "idle_timeout"}}) {
      CAPTURE(c.replacement);
      std::string text;
      int line = 0, n = 0;
      std::istringstream in(good);
      std::string l;
      while (std::getline(in, l)) {
        ++n;
        if (!line && l.find(c.needle) == 0) {
          l = c.replacement;
          line = n;
        }
        text += l + "\n";
      }
      REQUIRE(line > 0);
      std::string path = dir.file("broken.yaml");
      write_file(path, text);
      CommandResult r = run_command({bin, "--config", path}, "", 15s);
      INFO(r.describe());
      CHECK_FALSE(r.timed_out);
      CHECK(r.exit_code != 0);
      CHECK(contains(r.err + r.out, path + ":" + std::to_string(line)));
      CHECK(contains(r.err + r.out, c.key));
    }
    CommandResult missing = run_command({bin, "--config", dir.file("does-not-exist.yaml")}, "", 15s);
    CHECK(missing.exit_code != 0);
    CHECK(contains(missing.err + missing.out, "does-not-exist.yaml"));
  }

  TEST_CASE("docker/shardwire.example.yaml is a valid config") {
    PROXY_ONLY();
    std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    std::string example = std::string(SHARDWIRE_SOURCE_DIR) + "/docker/shardwire.example.yaml";
    REQUIRE_MESSAGE(!read_file(example).empty(), example << " is missing");
    CommandResult r = run_command({bin, "check", "--config", example}, "", 15s);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }

  TEST_CASE("a second shardwire on a port in use refuses to start unless listen.reuse_port") {
    PROXY_ONLY();
    const std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    ProxyProcess first(shared_cluster());
    TempDir dir;
    const std::string path = dir.file("second.yaml");
    write_file(path, render_config(ProxyOptions{}, first.port(), shared_cluster().port()));
    CommandResult second = run_command({bin, "--config", path}, "", 15s);
    INFO(second.describe());
    CHECK_FALSE(second.timed_out);
    CHECK(second.exit_code == 78);
    const std::string said = second.err + second.out;
    CHECK(contains(said, "cannot bind 127.0.0.1:" + std::to_string(first.port())));
    CHECK(contains(said, "already in use by another process"));
    CHECK(contains(said, "listen.reuse_port"));
    // The first one was not disturbed, and its own two workers share the port.
    CHECK(first.running());
    CHECK(contains(first.log(), "with 2 worker(s)"));
    CHECK(connect_or_throw(first.conninfo()).value("SELECT 'first'") == "first");
  }

  TEST_CASE("with listen.reuse_port two shardwires share one port") {
    PROXY_ONLY();
    const std::string bin = shardwire_binary();
    REQUIRE_MESSAGE(!bin.empty(), "shardwire is not built");
    ProxyOptions options;
    options.reuse_port = true;
    ProxyProcess first(shared_cluster(), options);
    TempDir dir;
    const std::string path = dir.file("second.yaml");
    write_file(path, render_config(options, first.port(), shared_cluster().port()));
    Background second({bin, "--config", path}, dir.file("second.log"));
    const bool listening = wait_until(
        [&] { return !second.running() || contains(read_file(dir.file("second.log")), "listening on"); }, 15s,
        10ms);
    INFO("second log:\n" << read_file(dir.file("second.log")));
    REQUIRE(listening);
    REQUIRE(second.running());
    // With the first gone, the port is served by the second alone.
    first.signal(SIGKILL);
    first.wait_exit(10s);
    ConnectResult c = connect(first.conninfo());
    REQUIRE_MESSAGE(c.ok, c.error);
    CHECK(c.conn.value("SELECT 'second'") == "second");
    CHECK(second.running());
    second.kill_and_wait();
  }

}  // TEST_SUITE
