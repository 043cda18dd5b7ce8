// The config file as the operator meets it: a broken file stops start-up with file:line and key,
// and the annotated example in docker/ stays valid.
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

}  // TEST_SUITE
