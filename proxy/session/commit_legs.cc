// CommitLegs: the client's COMMIT by two-phase commit, on the leg engine (docs/architecture.md
// §5.9).
#include "session/commit_legs.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

CommitLegs::CommitLegs(LegEngine& legs, std::string what, std::vector<LegEngine::Target> targets,
                       ServerState session_state, Calls calls)
    : engine_(&legs, std::move(targets), std::move(session_state), what, *this),
      calls_(std::move(calls)),
      driver_(
          std::move(what), calls_.two_phase,
          [this](size_t leg, const std::string& sql) {
            if (engine_.backend(leg) == nullptr) return;  // lost: the driver knows
            engine_.expect_ready(leg, 1);
            engine_.send_query(leg, sql);
          },
          calls_.finished),
      ready_seen_(engine_.size(), false) {}

CommitLegs::~CommitLegs() = default;

void CommitLegs::start(const std::vector<size_t>& written) {
  engine_.start();  // borrowed legs: every leg has its server when it returns
  driver_.start(engine_.shard_names(), written);
}

// Bare targets: no prologue; the driver sends the first statement.
void CommitLegs::on_leg_server(size_t /*leg*/, std::string /*prologue*/) {}

bool CommitLegs::on_leg_message(size_t leg, const LegEngine::Message& message) {
  if (message.type != 'E') return true;
  if (auto fields = wire::decode_error_fields(message.body);
      fields && (fields->severity == "FATAL" || fields->severity == "PANIC")) {
    const auto fatal = calls_.fatal;  // the call may destroy this, and calls_ with it
    if (fatal(leg, message.frame)) return true;
  }
  driver_.on_error(leg, LegEngine::error_of(message.body));
  return true;
}

void CommitLegs::on_leg_ready(size_t leg) {
  ready_seen_[leg] = true;
  driver_.on_ready(leg);
  after_event();
}

void CommitLegs::on_leg_violation(size_t leg, const Status& /*why*/) {
  const auto violation = calls_.violation;  // the session ends, and this with it
  violation(leg);
}

void CommitLegs::on_leg_lost(size_t leg, const Status& why) {
  driver_.on_lost(leg, why.message);
  after_event();
}

// The session may end the commit there (destroying this): the call runs on a copy.
void CommitLegs::after_event() {
  const auto after = calls_.after_event;
  after();
}

// Unreachable: every target's shard has a server of the transaction (the session builds the
// targets so), so no leg waits for a pool's. Logged should that ever change.
void CommitLegs::on_no_server(const Status& why) {
  LOG_WARN("%s: unexpected wait for a server: %s", engine_.what().c_str(), why.message.c_str());
}

}  // namespace sw::session
