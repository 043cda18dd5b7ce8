// Loop: tasks posted but never run are dropped while the loop is still whole. A task that owns
// a Connection (the pool defers deleting a server connection this way) must be able to close it
// from ~Loop: the connection's destructor closes its handle and removes itself from the loop's
// pending-flush list, so that list must still exist.
#include <doctest/doctest.h>

#include <memory>

#include "net/connection.h"
#include "net/loop.h"

namespace {

struct IgnoringHandler : sw::net::Connection::Handler {
  void on_readable(sw::net::Connection&) override {}
  void on_closed(sw::net::Connection&, const sw::Status&) override {}
};

}  // namespace

TEST_CASE("a connection owned by a task that never ran is closed safely when the loop goes away") {
  IgnoringHandler handler;
  auto loop = std::make_unique<sw::net::Loop>();
  std::shared_ptr<sw::net::Connection> connection =
      sw::net::Connection::connect(*loop, "127.0.0.1", 9, &handler, 1);
  REQUIRE(connection != nullptr);
  connection->write("unsent bytes keep the connection on the loop's pending-flush list");
  loop->post([connection] {});
  connection.reset();
  loop.reset();  // under AddressSanitizer, touching the loop's freed lists fails here
  CHECK(loop == nullptr);
}
