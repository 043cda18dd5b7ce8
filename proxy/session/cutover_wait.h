// A transaction whose first statement reads or writes a bucket in cutover (MIGRATING) waits until
// the directory says where the bucket lives now, bounded by cutover.queue_timeout and
// cutover.queue_max (then 40001). Statements of transactions already running on the source are
// not held: they go on and meet the source's fence. A request routed again after a directory
// change may wait once more without joining the queue again. Pure: the session owns the timer
// and the host's queue and does what the answers here say.
#pragma once

#include <cstdint>

namespace sw::session {

class CutoverWait {
 public:
  enum class Enter {
    Register,  // first wait of this request: join the host's queue, start the timeout
    Park,      // in the queue already (routed again after a directory change): wait on
  };

  // The request routes to a bucket in cutover.
  Enter enter(uint32_t bucket) {
    bucket_ = bucket;
    return registered_ ? Enter::Park : Enter::Register;
  }
  // The host's queue took the request (after Enter::Register).
  void registered() { registered_ = true; }
  // The request went on, was refused or timed out. True when the session must leave the host's
  // queue and stop the timeout.
  bool leave() {
    bool was = registered_;
    registered_ = false;
    return was;
  }

  bool waiting() const { return registered_; }
  uint32_t bucket() const { return bucket_; }  // the bucket of the last enter()

 private:
  bool registered_ = false;  // in the host's queue, the timeout running
  uint32_t bucket_ = 0;
};

}  // namespace sw::session
