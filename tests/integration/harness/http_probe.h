// GET on shardwire's metrics.listen port (curl): the probes /live and /ready, or /metrics. The
// body comes without its trailing newlines.
#pragma once

#include <string>

#include "harness/process.h"

namespace it {

struct HttpReply {
  int status = 0;  // 0: nothing answered
  std::string body;
};

inline HttpReply http_get(int port, const std::string& path) {
  CommandResult r = run_command({"curl", "-s", "--max-time", "2", "-w", "\n%{http_code}",
                                 "http://127.0.0.1:" + std::to_string(port) + path});
  HttpReply reply;
  size_t last = r.out.rfind('\n');
  if (last == std::string::npos) return reply;
  reply.body = r.out.substr(0, last);
  while (!reply.body.empty() && reply.body.back() == '\n') reply.body.pop_back();
  try {
    reply.status = std::stoi(r.out.substr(last + 1));
  } catch (...) {
    reply.status = 0;
  }
  return reply;
}

}  // namespace it
