// Error values for the data path, which never throws. Every error says whose fault it is, and
// carries the SQLSTATE a client will see.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sw {

// Whose fault an error is: decides logging level, metrics label and whether a client sees it.
enum class Fault { None, Client, Server, Proxy, Config };

const char* fault_name(Fault fault);

struct [[nodiscard]] Status {
  Fault fault = Fault::None;
  std::string sqlstate;  // five characters, e.g. "08P01"
  std::string message;   // what a person can act on; never secrets or parameter values

  static Status ok() { return {}; }
  static Status client(std::string sqlstate, std::string message) {
    return {Fault::Client, std::move(sqlstate), std::move(message)};
  }
  static Status server(std::string sqlstate, std::string message) {
    return {Fault::Server, std::move(sqlstate), std::move(message)};
  }
  static Status proxy(std::string sqlstate, std::string message) {
    return {Fault::Proxy, std::move(sqlstate), std::move(message)};
  }
  static Status config(std::string message) { return {Fault::Config, "F0000", std::move(message)}; }

  bool is_ok() const { return fault == Fault::None; }
  explicit operator bool() const { return is_ok(); }
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Status& status() const { return std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sw
