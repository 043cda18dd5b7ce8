#include "app/admin_host.h"

#include <memory>

#include "app/proxy.h"
#include "app/worker.h"
#include "catalog/in_doubt.h"
#include "catalog/routers.h"
#include "net/timer.h"

namespace sw::app {
namespace {
constexpr uint64_t kPausePollMs = 10;
}

void AdminHost::here(std::function<void()> task) { worker_.loop().post(std::move(task)); }

net::Loop& AdminHost::worker_loop() { return worker_.loop(); }

std::shared_ptr<const config::Config> AdminHost::config() { return proxy_.config(); }

void AdminHost::gather(bool lists, std::function<void(stats::Snapshot)> done) {
  proxy_.gather(lists, [this, done = std::move(done)](stats::Snapshot snapshot) mutable {
    here([done = std::move(done), snapshot = std::move(snapshot)]() mutable { done(std::move(snapshot)); });
  });
}

admin::DirectoryStatus AdminHost::directory_status() { return proxy_.directory_status(); }

void AdminHost::list_routers(std::function<void(Result<std::vector<catalog::RegisteredRouter>>)> done) {
  std::string dsn = proxy_.config()->catalog.dsn;
  off_loop<Result<std::vector<catalog::RegisteredRouter>>>([dsn] { return catalog::list_routers(dsn); },
                                                           std::move(done));
}

void AdminHost::list_in_doubt(std::function<void(Result<std::vector<twopc::InDoubtTransaction>>)> done) {
  auto config = proxy_.config();
  off_loop<Result<std::vector<twopc::InDoubtTransaction>>>(
      [config] { return catalog::list_in_doubt(*config); }, std::move(done));
}

void AdminHost::list_id_slots(std::function<void(Result<std::vector<catalog::IdSlot>>)> done) {
  std::string dsn = proxy_.config()->catalog.dsn;
  off_loop<Result<std::vector<catalog::IdSlot>>>([dsn] { return catalog::list_id_slots(dsn); },
                                                 std::move(done));
}

admin::ProxyState AdminHost::state() { return proxy_.state(); }

void AdminHost::pause(std::function<void()> done) {
  proxy_.set_paused(true);
  wait_until_idle(std::move(done));
}

// PAUSE completes when no session on any worker holds a server (new transactions are held).
void AdminHost::wait_until_idle(std::function<void()> done) {
  proxy_.count_busy([this, done = std::move(done)](int busy) mutable {
    here([this, busy, done = std::move(done)]() mutable {
      if (busy == 0 || !proxy_.state().paused) {
        done();
        return;
      }
      if (!poll_timer_) poll_timer_ = std::make_unique<net::Timer>(worker_.loop());
      poll_timer_->start(kPausePollMs, 0,
                         [this, done = std::move(done)]() mutable { wait_until_idle(std::move(done)); });
    });
  });
}

Status AdminHost::resume() {
  if (!proxy_.state().paused) return Status::client("55000", "not paused");
  proxy_.set_paused(false);
  return Status::ok();
}

void AdminHost::reload(std::function<void(Status)> done) {
  proxy_.request_reload([this, done = std::move(done)](Status status) mutable {
    here([done = std::move(done), status = std::move(status)] { done(status); });
  });
}

void AdminHost::shutdown(admin::ShutdownMode mode) { proxy_.request_shutdown(mode); }

void AdminHost::kill_client(uint64_t id, std::function<void(bool)> done) {
  proxy_.kill_client(id, [this, done = std::move(done)](bool found) mutable {
    here([done = std::move(done), found] { done(found); });
  });
}

void AdminHost::reconnect() { proxy_.reconnect(); }

}  // namespace sw::app
