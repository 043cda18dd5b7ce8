// The pgjdbc checks in tests/drivers/java (each a class with a main), compiled with javac once per
// test process into a class directory that lives as long as the process.
#pragma once

#include <dirent.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/process.h"

namespace it {

inline const char* const kJdbcJar = "/usr/share/java/postgresql.jar";

// The classpath to run a check with: `java -cp <this> JdbcCheck ...`. Needs SHARDWIRE_SOURCE_DIR,
// which only the test files are compiled with.
inline const std::string& jdbc_classpath() {
  static TempDir dir("shardwire-jdbc-");
  static const std::string classpath = [] {
    const std::string sources = std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/java/";
    std::vector<std::string> argv = {"javac", "-d", dir.path(), "-cp", kJdbcJar};
    if (DIR* d = opendir(sources.c_str())) {
      while (const dirent* entry = readdir(d)) {
        const std::string name = entry->d_name;
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".java") == 0) argv.push_back(sources + name);
      }
      closedir(d);
    }
    CommandResult r = run_command(argv, "", std::chrono::seconds(120));
    if (r.exit_code != 0) throw std::runtime_error("javac " + sources + "*.java: " + r.describe());
    return std::string(kJdbcJar) + ":" + dir.path();
  }();
  return classpath;
}

}  // namespace it
