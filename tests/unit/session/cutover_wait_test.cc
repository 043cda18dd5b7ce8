#include "session/cutover_wait.h"

#include <doctest/doctest.h>

using sw::session::CutoverWait;
using Enter = CutoverWait::Enter;

TEST_CASE("cutover wait: joins the queue once per request, however often it is routed again") {
  CutoverWait wait;
  CHECK_FALSE(wait.leave());  // never waited: nothing to leave
  CHECK(wait.enter(17) == Enter::Register);
  wait.registered();
  CHECK(wait.waiting());
  // A new directory: routed again, the bucket still in cutover.
  CHECK(wait.enter(17) == Enter::Park);
  CHECK(wait.bucket() == 17);
  CHECK(wait.leave());  // it went on: leave the queue, stop the timeout
  CHECK_FALSE(wait.waiting());
  CHECK_FALSE(wait.leave());
}

TEST_CASE("cutover wait: a full queue leaves nothing to undo") {
  CutoverWait wait;
  CHECK(wait.enter(3) == Enter::Register);
  // The host refused (cutover.queue_max): the session refuses the request without registering.
  CHECK_FALSE(wait.leave());
  CHECK(wait.enter(3) == Enter::Register);
}
