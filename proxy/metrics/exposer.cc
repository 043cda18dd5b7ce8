#include "metrics/exposer.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <utility>

#include <CivetServer.h>
#include <prometheus/exposer.h>

#include "metrics/collector.h"

namespace sw::metrics {
namespace {

struct ListenAddress {
  std::string ip;  // numeric
  bool ipv6 = false;
  int port = 0;
};

Status listen_error(const std::string& listen, const std::string& why) {
  return Status::config("metrics.listen " + listen + ": " + why);
}

// "host:port" -> numeric address and port. Host names are resolved here, once: civetweb only
// takes numeric addresses.
Result<ListenAddress> parse_listen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return listen_error(listen, "must be \"host:port\"");
  }
  std::string host = listen.substr(0, colon);
  std::string port_text = listen.substr(colon + 1);
  if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port_text) > 65535) {
    return listen_error(listen, "port must be 0..65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return listen_error(listen, std::string("cannot resolve host: ") + gai_strerror(rc));
  }
  const addrinfo* pick = found;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET) {
      pick = ai;  // civetweb's IPv4 support is unconditional; prefer it
      break;
    }
  }
  char text[NI_MAXHOST] = {};
  ListenAddress out;
  out.port = std::stoi(port_text);
  out.ipv6 = pick->ai_family == AF_INET6;
  bool ok = getnameinfo(pick->ai_addr, pick->ai_addrlen, text, sizeof(text), nullptr, 0, NI_NUMERICHOST) == 0;
  freeaddrinfo(found);
  if (!ok) return listen_error(listen, "cannot use host address");
  out.ip = text;
  return out;
}

// civetweb reports a failed bind only as "possible problem binding to port"; bind the same
// address ourselves to say what the problem is. Returns "" if that bind works.
std::string probe_bind(const ListenAddress& address) {
  int fd = socket(address.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::strerror(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as civetweb does
  int rc;
  if (address.ipv6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(address.port));
    inet_pton(AF_INET6, address.ip.c_str(), &sa.sin6_addr);
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(address.port));
    inet_pton(AF_INET, address.ip.c_str(), &sa.sin_addr);
    rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  }
  int err = errno;
  close(fd);
  if (rc == 0) return "";
  switch (err) {
    case EADDRINUSE: return "address in use";
    case EACCES: return "permission denied";
    case EADDRNOTAVAIL: return "address not available on this host";
    default: return std::strerror(err);
  }
}

// civetweb copies the callbacks when it starts; one set serves every exposer.
const CivetCallbacks* probe_callbacks() {
  static const CivetCallbacks* callbacks = [] {
    auto* c = new CivetCallbacks();
    c->begin_request = answer_probe;
    return c;
  }();
  return callbacks;
}

}  // namespace

Result<std::unique_ptr<Exposer>> Exposer::start(const std::string& listen, std::function<Readings()> read,
                                                ReadinessCheck ready) {
  Result<ListenAddress> address = parse_listen(listen);
  if (!address) return address.status();
  std::string bind = address->ipv6 ? "[" + address->ip + "]:" + std::to_string(address->port)
                                   : address->ip + ":" + std::to_string(address->port);

  std::unique_ptr<Exposer> exposer(new Exposer());
  exposer->collector_ = std::make_shared<ReadingsCollector>(std::move(read));
  try {
    exposer->server_ = std::make_unique<prometheus::Exposer>(bind, /*num_threads=*/2, probe_callbacks());
  } catch (const std::exception& e) {
    std::string why = probe_bind(*address);
    return listen_error(listen, why.empty() ? e.what() : why);
  } catch (...) {
    std::string why = probe_bind(*address);
    return listen_error(listen, why.empty() ? "cannot listen" : why);
  }
  try {
    exposer->server_->RegisterCollectable(exposer->collector_);
    std::vector<int> ports = exposer->server_->GetListeningPorts();
    exposer->port_ = ports.empty() ? address->port : ports.front();
    add_probes(exposer->port_, std::move(ready));
  } catch (const std::exception& e) {
    return listen_error(listen, e.what());
  }
  return Result<std::unique_ptr<Exposer>>(std::move(exposer));
}

Exposer::~Exposer() {
  server_.reset();  // no probe is answered after this
  if (port_ != 0) remove_probes(port_);
}

}  // namespace sw::metrics
