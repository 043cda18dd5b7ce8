#include "resource_bounds/result_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "harness/pg_client.h"
#include "resource_bounds/client_swarm.h"

namespace it::rb {

bool ResultStream::feed(std::string_view bytes) {
  if (!error_.empty()) return false;
  bytes_ += bytes.size();
  // Complete messages are parsed in place; only a message split across reads is copied.
  std::string_view rest = bytes;
  while (!pending_.empty() && !rest.empty()) {
    size_t want = pending_.size() < 5 ? 5 : 1 + static_cast<size_t>(wire::get_be32(pending_, 1));
    if (want < 5) {
      error_ = "message length below 4";
      return false;
    }
    size_t take = std::min(rest.size(), want - pending_.size());
    pending_.append(rest.substr(0, take));
    rest.remove_prefix(take);
    if (pending_.size() > 5 && pending_.size() == 1 + static_cast<size_t>(wire::get_be32(pending_, 1))) {
      std::string message = std::move(pending_);
      pending_.clear();
      if (!on_message(message[0], std::string_view(message).substr(5))) return false;
    } else if (pending_.size() == 5 && wire::get_be32(pending_, 1) == 4) {
      std::string message = std::move(pending_);
      pending_.clear();
      if (!on_message(message[0], {})) return false;
    }
  }
  if (!pending_.empty()) return true;  // every byte went into the split message
  while (rest.size() >= 5) {
    uint32_t length = wire::get_be32(rest, 1);
    if (length < 4) {
      error_ = "message length " + std::to_string(length) + " below 4";
      return false;
    }
    if (rest.size() < 1 + static_cast<size_t>(length)) break;
    if (!on_message(rest[0], rest.substr(5, length - 4))) return false;
    rest.remove_prefix(1 + length);
  }
  pending_.assign(rest);
  return true;
}

bool ResultStream::on_message(char type, std::string_view body) {
  if (complete_) {
    error_ = std::string("message '") + type + "' after ReadyForQuery";
    return false;
  }
  switch (type) {
    case 'T': return true;  // RowDescription
    case 'D': {
      if (body.size() != 6 + value_width_ || wire::get_be32(body, 2) != value_width_ || body[0] != 0 ||
          body[1] != 1) {
        error_ = "row " + std::to_string(rows_ + 1) + " is not one column of " +
                 std::to_string(value_width_) + " bytes: " + wire::printable(body, 40);
        return false;
      }
      if (body.substr(6).find_first_not_of('x') != std::string_view::npos) {
        error_ = "row " + std::to_string(rows_ + 1) + " has a byte other than 'x'";
        return false;
      }
      ++rows_;
      return true;
    }
    case 'C': command_tag_ = std::string(body.substr(0, body.find('\0'))); return true;
    case 'Z': complete_ = true; return true;
    case 'E':
      error_ =
          "ErrorResponse " + wire::parse_error(body).sqlstate() + ": " + wire::parse_error(body).message();
      return false;
    default: error_ = std::string("unexpected message '") + type + "'"; return false;
  }
}

SmallWindowClient::SmallWindowClient(int port, int rcvbuf, const std::string& user,
                                     const std::string& database) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0)
    throw std::runtime_error(std::string("SO_RCVBUF: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  RawSocket socket = RawSocket::borrow(fd_);
  if (!socket.send_all(wire::startup_message({{"user", user}, {"database", database}})))
    throw std::runtime_error("sending the startup packet failed");
  std::string bytes;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline && !socket.closed()) {
    bytes += socket.read_some(std::chrono::milliseconds(200));
    std::string rest;
    for (const wire::Message& m : wire::parse_messages(bytes, &rest)) {
      if (m.type == 'E') throw std::runtime_error("login refused: " + wire::parse_error(m.body).message());
      if (m.type == 'R' && wire::get_be32(m.body, 0) != 0)
        throw std::runtime_error("the proxy asked for a password: trust authentication expected");
      if (m.type == 'Z') return;
    }
  }
  throw std::runtime_error("no ReadyForQuery within 15 s: " + wire::printable(bytes));
}

SmallWindowClient::~SmallWindowClient() {
  if (fd_ >= 0) ::close(fd_);
}

RssSampler::RssSampler(pid_t pid, int every_ms) : pid_(pid) {
  sample();
  thread_ = std::thread([this, every_ms] {
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
      sample();
    }
  });
}

void RssSampler::sample() {
  long now = rss_kib(pid_);
  if (now < 0) return;
  last_kib_.store(now);
  if (now > peak_kib_.load()) peak_kib_.store(now);
  samples_.fetch_add(1);
}

void RssSampler::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace it::rb
