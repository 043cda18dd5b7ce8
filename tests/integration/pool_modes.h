// Running a test case once per pool mode against the shared cluster.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#include "harness/pg_cluster.h"
#include "harness/proxy_process.h"

namespace it {

// Runs `body` once per pool mode ("transaction", then "session") against a Target on the shared
// cluster with `options` in that mode; the mode is captured and the proxy log shown with any
// failure. `body` takes (Target&) or (Target&, const std::string& mode).
template <typename Body>
void for_each_pool_mode(ProxyOptions options, Body body) {
  for (const std::string mode : {"transaction", "session"}) {
    CAPTURE(mode);
    options.pool_mode = mode;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    if constexpr (std::is_invocable_v<Body, Target&, const std::string&>)
      body(t, mode);
    else
      body(t);
  }
}
template <typename Body>
void for_each_pool_mode(Body body) {
  const ProxyOptions defaults;  // not ProxyOptions{} here: GCC 12 fails on it (internal error)
  for_each_pool_mode(defaults, body);
}

}  // namespace it
