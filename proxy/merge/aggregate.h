// Final aggregation of partial results: one Accumulator per aggregated client column of a group,
// fed the shards' partial values (text format), producing PostgreSQL's result value and type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "merge/decimal.h"
#include "merge/distinct_set.h"
#include "merge/ordered_list.h"
#include "merge/plan.h"
#include "merge/value.h"

namespace sw::merge {

// The client's type of an aggregated column from the shards' column type (`count_type` is the
// Avg count column's). 0A000 naming the aggregate when it cannot be combined exactly.
Result<uint32_t> combined_type(Combine combine, uint32_t shard_type);

class Accumulator {
 public:
  // `dates`: how the session prints dates and times (decode_text).
  Accumulator(Combine combine, uint32_t shard_type, DateReading dates = {})
      : combine_(combine), type_(shard_type), dates_(dates) {
    if (combine == Combine::SumDistinct || combine == Combine::AvgDistinct) distinct_.keep_values();
  }

  // One shard's partial value; `count` is the Avg count column (ignored otherwise).
  Status add(const std::optional<std::string>& value, const std::optional<std::string>& count);
  // One shard's partials of a variance or standard deviation (plan.h's VarSamp ...): sum(x),
  // count(x), sum(x::numeric * x::numeric), var_pop(x).
  Status add_variance(const std::optional<std::string>& sum, const std::optional<std::string>& count,
                      const std::optional<std::string>& squares, const std::optional<std::string>& var_pop);
  // SumDistinct / AvgDistinct: adds the distinct values in the type's order with sum's and avg's
  // rules (PostgreSQL's errors: 22003 for a float overflow); the others have nothing to finish.
  // Called once, after the last add() and before result().
  Status finish();
  std::optional<std::string> result() const;  // text format, the client's type
  // ArrayAgg / StringAgg: one shard's arrays (the values', then each sort key's; OrderedList).
  Status add_ordered(std::span<const std::optional<std::string>> arrays) {
    return ordered_.add(arrays, dates_, budget_);
  }
  // ArrayAgg / StringAgg: the output column (sort keys, DISTINCT, separator) and the element
  // types of its sort keys' arrays.
  void set_order(const OutputColumn& out, std::vector<uint32_t> key_types) {
    ordered_.configure(out.within, std::move(key_types), out.within_distinct);
    separator_ = out.separator;
  }
  // CountDistinct, ArrayAgg, StringAgg: the merge's budget of distinct values all its groups share (null:
  // none).
  void set_budget(DistinctBudget* budget) { budget_ = budget; }

 private:
  Status add_real(double partial, int64_t n, double shard_sxx);  // float4/float8 sum, avg, variances
  Status accumulate_real(double value);  // AvgDistinct of real and float8: float8_accum
  std::optional<std::string> variance_result() const;

  Combine combine_;
  uint32_t type_;
  DateReading dates_;
  bool seen_ = false;  // a non-NULL partial arrived
  Int128 integer_ = 0;
  double real_ = 0;
  double sxx_ = 0;  // avg, variances of float8: float8_combine's Sxx
  Decimal decimal_ = Decimal::from_int(0);
  Decimal squares_ = Decimal::from_int(0);  // variances of integers and numeric: sum of x * x
  int64_t count_ = 0;
  std::string text_;  // Min/Max: the best value so far, and its decoded form
  std::optional<Value> best_;
  bool flag_ = false;                    // BoolAnd/BoolOr
  DistinctSet distinct_;                 // CountDistinct, SumDistinct, AvgDistinct
  std::optional<std::string> finished_;  // SumDistinct, AvgDistinct: finish()'s value
  OrderedList ordered_;                  // ArrayAgg, StringAgg
  std::string separator_;                // StringAgg
  DistinctBudget* budget_ = nullptr;
};

}  // namespace sw::merge
