// The one slot for the multi-shard runner of the client's request in progress (docs/architecture.md
// §5.6): a Fanout, a MergeFanout, a CopyIn, a ReferenceWrite or a SplitInsert, each an answer
// policy on the leg engine. At most one runs at a time (the session reads no client input while
// one runs, but for a MergeFanout parked at a portal's row limit, which takes that input itself),
// so one slot holds it; the type says which. Pure: no I/O.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

namespace sw::session {

template <class... Runners>
class RunnerSlotOf {
 public:
  // The runner when it is a T, else null (also while a T is being destroyed by reset<T>).
  template <class T>
  T* get() const {
    const auto* held = std::get_if<std::unique_ptr<T>>(&slot_);
    return held != nullptr ? held->get() : nullptr;
  }
  bool empty() const { return std::holds_alternative<std::monostate>(slot_); }
  // The runner, whatever its type, as its (public) base `Base`; null when the slot is empty.
  template <class Base>
  Base* as() const {
    return std::visit(
        [](const auto& held) -> Base* {
          if constexpr (std::is_same_v<std::decay_t<decltype(held)>, std::monostate>) {
            return nullptr;
          } else {
            return held.get();
          }
        },
        slot_);
  }

  // Starts a T in the slot, which must be empty (one runner at a time).
  template <class T, class... Args>
  T& emplace(Args&&... args) {
    auto& held = slot_.template emplace<std::unique_ptr<T>>(std::make_unique<T>(std::forward<Args>(args)...));
    return *held;
  }
  // Ends the runner if it is a T (nothing else): get<T>() is null while it is destroyed, as when a
  // std::unique_ptr is reset.
  template <class T>
  void reset() {
    auto* held = std::get_if<std::unique_ptr<T>>(&slot_);
    if (held == nullptr) return;
    held->reset();
    slot_.template emplace<std::monostate>();
  }

 private:
  std::variant<std::monostate, std::unique_ptr<Runners>...> slot_;
};

}  // namespace sw::session
