#include "pool/pool.h"

#include <algorithm>
#include <iterator>

#include "common/log.h"
#include "net/listener.h"
#include "net/loop.h"
#include "net/tls.h"
#include "wire/startup.h"

namespace sw::pool {
namespace {
constexpr uint64_t kMaintenanceIntervalMs = 100;
// How long a server may take to hang up after Terminate before the proxy closes its end.
constexpr uint64_t kHangupWaitMs = 1000;
}  // namespace

// Sends one CancelRequest and waits for the server to close the connection: PostgreSQL has then
// signalled the backend (an idle one drops the cancel), so the cancel is delivered. Pools last
// as long as their worker: one destroyed with a cancel in flight (at exit) runs no `delivered`,
// whose loop may be gone already.
class CancelSender : public net::Connection::Handler {
 public:
  CancelSender(Pool& pool, wire::CancelKey key, const Backend* backend, std::function<void()> delivered)
      : pool_(pool), key_(key), backend_(backend), delivered_(std::move(delivered)) {}
  void on_connected(net::Connection& c, const Status& status) override {
    if (status)
      c.write(wire::encode_cancel_request(key_));
    else
      finish();
  }
  void on_readable(net::Connection& c) override { c.consume(c.input().size()); }
  void on_closed(net::Connection&, const Status&) override { finish(); }

  // Delivered or given up: the backend may go to another client, the requester is told.
  void finish() {
    if (finished_) return;
    finished_ = true;
    pool_.on_cancel_finished(backend_);
    if (auto delivered = std::move(delivered_)) {
      delivered_ = nullptr;
      delivered();
    }
  }
  bool finished() const { return finished_; }
  void forget_backend(const Backend* backend) {
    if (backend_ == backend) backend_ = nullptr;
  }

 private:
  Pool& pool_;
  wire::CancelKey key_;
  const Backend* backend_;  // null once it is gone
  std::function<void()> delivered_;
  bool finished_ = false;
};

Pool::Pool(net::Loop& loop, BackendTarget target, PoolSettings settings, std::shared_ptr<Budget> budget)
    : loop_(loop),
      target_(std::move(target)),
      settings_(std::move(settings)),
      budget_(std::move(budget)),
      maintenance_(loop) {
  maintenance_.start(kMaintenanceIntervalMs, kMaintenanceIntervalMs, [this] { maintain(); });
  maintenance_.unref();
  Budget::Member member;
  member.id = this;
  member.post = [&loop](std::function<void()> task) { loop.post(std::move(task)); };
  member.shed_one_idle = [this] { shed_one_idle(); };
  member.capacity_freed = [this] { grow_if_needed(); };
  budget_->join(std::move(member));
}

Pool::CancelInFlight::CancelInFlight() = default;
Pool::CancelInFlight::CancelInFlight(CancelInFlight&&) noexcept = default;
Pool::CancelInFlight::~CancelInFlight() = default;

Pool::~Pool() {
  budget_->leave(this);
  for (auto& [raw, backend] : backends_) {
    backend->close();
    budget_->give_back();
  }
  for (size_t i = 0; i < terminating_.size(); ++i) budget_->give_back();
}

void Pool::note_waiting() { budget_->set_waiting(this, !waiters_.empty()); }

// Another worker needs a server and this one holds capacity idle: give a slot back.
void Pool::shed_one_idle() {
  if (idle_.empty()) return;
  Backend* oldest = idle_.front();
  LOG_DEBUG("server=s%llu closing: capacity needed by another worker", (unsigned long long)oldest->id());
  oldest->close();
  destroy_later(oldest);
}

Backend* Pool::acquire(Waiter* waiter, uint64_t client) {
  if (client != 0) {
    const auto searched =
        idle_.rbegin() + static_cast<std::ptrdiff_t>(std::min(idle_.size(), kOwnServerDepth));
    auto own = std::find_if(idle_.rbegin(), searched, [client](const Backend* backend) {
      return backend->sequences_of == client && backend->state() == Backend::State::Idle;
    });
    if (own != searched) {
      Backend* backend = *own;
      idle_.erase(std::next(own).base());
      backend->state_ = Backend::State::Active;
      return backend;
    }
  }
  while (!idle_.empty()) {
    Backend* backend = idle_.back();
    idle_.pop_back();
    if (backend->state() != Backend::State::Idle) continue;
    backend->state_ = Backend::State::Active;
    return backend;
  }
  waiters_.push_back({waiter, net::now_ms(loop_)});
  if (waiters_.size() == 1) note_waiting();
  grow_if_needed();
  return nullptr;
}

void Pool::cancel_wait(Waiter* waiter) {
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                [waiter](const Waiting& w) { return w.waiter == waiter; }),
                 waiters_.end());
  if (waiters_.empty()) note_waiting();
}

void Pool::release(Backend* backend, bool clean) {
  backend->detach();
  if (clean && !backend->connection().input().empty()) {
    // Bytes nobody read would reach the next user as answers to its queries.
    LOG_WARN("server=s%llu released with unread input; closing it", (unsigned long long)backend->id());
    clean = false;
  }
  uint64_t now = net::now_ms(loop_);
  bool expired = now - backend->created_ms > settings_.server_lifetime_ms;
  if (!clean || backend->library_loaded || expired || retired_ || backend->state() != Backend::State::Idle) {
    if (!clean)
      LOG_INFO("server=s%llu closing: released in an unknown state", (unsigned long long)backend->id());
    else if (backend->library_loaded)
      LOG_INFO("server=s%llu closing: a client loaded a library into it, which no reset unloads",
               (unsigned long long)backend->id());
    backend->close();
    destroy_later(backend);
    grow_if_needed();
    return;
  }
  hand_to_waiter_or_idle(backend);
}

void Pool::hand_to_waiter_or_idle(Backend* backend) {
  if (cancels_pending_.count(backend) != 0) {
    parked_.push_back(backend);
    return;
  }
  if (!waiters_.empty()) {
    Waiter* waiter = waiters_.front().waiter;
    traffic_.wait_time_us += (net::now_ms(loop_) - waiters_.front().since_ms) * 1000;
    waiters_.pop_front();
    if (waiters_.empty()) note_waiting();
    backend->state_ = Backend::State::Active;
    waiter->on_backend_ready(backend);
    return;
  }
  backend->idle_since_ms = net::now_ms(loop_);
  idle_.push_back(backend);
}

void Pool::grow_if_needed() {
  if (retired_) return;
  Counts c = counts();
  int wanted = c.waiting - c.connecting;
  while (wanted > 0 && budget_->try_take()) {
    --wanted;
    uint64_t id = net::next_connection_id();
    auto backend = std::make_unique<Backend>(*this, id, net::now_ms(loop_));
    Backend* raw = backend.get();
    backends_.emplace(raw, std::move(backend));
    raw->start();
  }
  if (wanted > 0 && c.connecting == 0) budget_->ask_others_to_shed(this);
}

void Pool::on_login_done(Backend* backend) {
  if (backend->parameters() != server_parameters_) probed_parameters_.clear();  // another server version, say
  server_parameters_ = backend->parameters();
  LOG_DEBUG("server=s%llu shard=%s logged in", (unsigned long long)backend->id(), target_.shard.c_str());
  hand_to_waiter_or_idle(backend);
}

const std::map<std::string, std::string>* Pool::probed_parameters(const std::string& startup) const {
  auto found = probed_parameters_.find(startup);
  return found == probed_parameters_.end() ? nullptr : &found->second;
}

void Pool::remember_probed_parameters(const std::string& startup,
                                      std::map<std::string, std::string> reported) {
  if (probed_parameters_.size() >= kMaxProbedStartups && probed_parameters_.count(startup) == 0)
    probed_parameters_.erase(probed_parameters_.begin());
  probed_parameters_[startup] = std::move(reported);
}

void Pool::on_login_failed(Backend* backend, const Status& why) {
  destroy_later(backend);
  // Every waiter hears it: a server that refuses one login refuses the next one too.
  std::deque<Waiting> failed;
  failed.swap(waiters_);
  note_waiting();
  Status status = why;
  if (status.fault == Fault::None) status = Status::server("08006", "login failed");
  status.message = "could not connect to shard " + target_.shard + ": " + status.message;
  for (auto& w : failed) w.waiter->on_backend_failed(status);
}

void Pool::on_backend_closed(Backend* backend) {
  if (auto it = terminating_.find(backend); it != terminating_.end()) {
    std::shared_ptr<Backend> doomed = std::move(it->second.first);
    terminating_.erase(it);
    finish_closed(std::move(doomed));
    grow_if_needed();
    return;
  }
  idle_.erase(std::remove(idle_.begin(), idle_.end(), backend), idle_.end());
  destroy_later(backend);
  grow_if_needed();
}

void Pool::destroy_later(Backend* backend) {
  auto it = backends_.find(backend);
  if (it == backends_.end()) return;
  idle_.erase(std::remove(idle_.begin(), idle_.end(), backend), idle_.end());
  forget_cancels_of(backend);
  // Deleting inside the backend's own callback would pull the floor from under it.
  std::shared_ptr<Backend> doomed(std::move(it->second));
  backends_.erase(it);
  if (doomed->awaiting_hangup() && doomed->connection_ && doomed->connection_->is_open()) {
    terminating_.emplace(backend, std::make_pair(std::move(doomed), net::now_ms(loop_)));
    return;
  }
  finish_closed(std::move(doomed));
}

void Pool::finish_closed(std::shared_ptr<Backend> doomed) {
  if (doomed->connection_) {
    closed_bytes_received_ += doomed->connection_->bytes_written();
    closed_bytes_sent_ += doomed->connection_->bytes_read();
  }
  budget_->give_back();
  loop_.post([doomed = std::move(doomed)] {});
}

void Pool::close_lingering(uint64_t now) {
  std::vector<Backend*> late;
  for (const auto& [raw, entry] : terminating_)
    if (entry.second + kHangupWaitMs <= now) late.push_back(raw);  // a later `since` never wraps
  for (Backend* raw : late) {
    LOG_WARN("server=s%llu shard=%s did not hang up within %llu ms of Terminate; closing its connection",
             (unsigned long long)raw->id(), target_.shard.c_str(), (unsigned long long)kHangupWaitMs);
    raw->connection_->close();
    raw->awaiting_hangup_ = false;
    on_backend_closed(raw);
  }
}

// Deadlines are compared as `since + timeout < now`: a time taken after `now` (a server this very
// call opened) must not wrap around into an expired one.
void Pool::maintain() {
  uint64_t now = net::now_ms(loop_);
  if (!waiters_.empty()) grow_if_needed();  // capacity may have gone idle on another worker
  if (!waiters_.empty() && log::enabled(log::Level::Debug)) {
    Counts c = counts();
    LOG_DEBUG("pool shard=%s active=%d idle=%d connecting=%d waiting=%d max_wait_ms=%llu",
              target_.shard.c_str(), c.active, c.idle, c.connecting, c.waiting,
              (unsigned long long)c.max_wait_ms);
  }
  while (!waiters_.empty() && waiters_.front().since_ms + settings_.query_wait_timeout_ms <= now) {
    Waiter* waiter = waiters_.front().waiter;
    traffic_.wait_time_us += (now - waiters_.front().since_ms) * 1000;
    waiters_.pop_front();
    if (waiters_.empty()) note_waiting();
    waiter->on_backend_failed(Status::proxy("57014", "no server connection to shard " + target_.shard +
                                                         " became free within query_wait_timeout (" +
                                                         std::to_string(settings_.query_wait_timeout_ms) +
                                                         " ms)"));
  }
  std::vector<Backend*> doomed;
  for (auto& [raw, backend] : backends_) {
    bool logging_in = raw->state() == Backend::State::Connecting ||
                      raw->state() == Backend::State::Negotiating ||
                      raw->state() == Backend::State::LoggingIn;
    if (logging_in && raw->created_ms + settings_.connect_timeout_ms < now) doomed.push_back(raw);
  }
  for (Backend* b : doomed) b->fail_login(Status::server("08006", "server_connect_timeout expired"));
  // Idle servers: the oldest idle sit at the front (LIFO hands out from the back).
  std::vector<Backend*> keep;
  for (Backend* b : idle_) {
    bool idle_too_long = b->idle_since_ms + settings_.idle_timeout_ms < now;
    bool too_old = b->created_ms + settings_.server_lifetime_ms < now;
    if (idle_too_long || too_old || retired_) {
      LOG_DEBUG("server=s%llu closing: %s", (unsigned long long)b->id(),
                retired_        ? "pool retired"
                : idle_too_long ? "idle_timeout"
                                : "server_lifetime");
      b->close();
      doomed.push_back(b);
    } else {
      keep.push_back(b);
    }
  }
  idle_.swap(keep);
  for (Backend* b : doomed) destroy_later(b);
  for (CancelInFlight& c : cancels_)
    if (c.started_ms + settings_.connect_timeout_ms < now) c.sender->finish();  // given up
  cancels_.remove_if(
      [&](const CancelInFlight& c) { return !c.connection->is_open() || c.sender->finished(); });
  // Last: the capacity this frees may open servers, which the checks above must not see as
  // started before `now`.
  close_lingering(now);
}

void Pool::update_settings(const PoolSettings& settings) {
  settings_ = settings;
  budget_->set_size(settings.size);
  grow_if_needed();
}

void Pool::retire() {
  retired_ = true;
  maintain();
}

Pool::Counts Pool::counts() const {
  Counts c;
  for (auto& [raw, backend] : backends_) {
    switch (raw->state()) {
      case Backend::State::Active: ++c.active; break;
      case Backend::State::Idle: ++c.idle; break;
      case Backend::State::Closed: break;
      default: ++c.connecting; break;
    }
  }
  c.waiting = static_cast<int>(waiters_.size());
  if (!waiters_.empty()) c.max_wait_ms = net::now_ms(loop_) - waiters_.front().since_ms;
  return c;
}

std::shared_ptr<net::TlsContext> Pool::tls_context(Status* error) {
  if (tls_) return tls_;
  bool verify = target_.sslmode == "verify-ca" || target_.sslmode == "verify-full";
  auto context = net::TlsContext::make_client(verify, target_.sslrootcert);
  if (!context) {
    *error = context.status();
    return nullptr;
  }
  tls_ = *context;
  return tls_;
}

void Pool::send_cancel(const Backend& backend, std::function<void()> delivered) {
  ++cancels_pending_[&backend];
  CancelInFlight cancel;
  cancel.sender = std::make_unique<CancelSender>(*this, backend.server_key(), &backend, std::move(delivered));
  cancel.connection = net::Connection::connect(loop_, target_.host, target_.port, cancel.sender.get(),
                                               net::next_connection_id());
  cancel.started_ms = net::now_ms(loop_);
  cancels_.push_back(std::move(cancel));
}

// A server a cancel was on its way to may run another client's statement only once the cancel
// arrived: released meanwhile, it waits (parked_) until then.
void Pool::on_cancel_finished(const Backend* backend) {
  auto it = cancels_pending_.find(backend);
  if (it == cancels_pending_.end() || --it->second > 0) return;
  cancels_pending_.erase(it);
  auto parked = std::find(parked_.begin(), parked_.end(), backend);
  if (parked == parked_.end()) return;
  Backend* ready = *parked;
  parked_.erase(parked);
  hand_to_waiter_or_idle(ready);
}

void Pool::forget_cancels_of(const Backend* backend) {
  cancels_pending_.erase(backend);
  parked_.erase(std::remove(parked_.begin(), parked_.end(), backend), parked_.end());
  for (CancelInFlight& cancel : cancels_) cancel.sender->forget_backend(backend);
}

}  // namespace sw::pool
