#include "common/status.h"

namespace sw {

const char* fault_name(Fault fault) {
  switch (fault) {
    case Fault::None: return "none";
    case Fault::Client: return "client";
    case Fault::Server: return "server";
    case Fault::Proxy: return "proxy";
    case Fault::Config: return "config";
  }
  return "unknown";
}

}  // namespace sw
