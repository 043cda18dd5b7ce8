#include "merge/aggregate.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "merge/binary_array.h"

namespace sw::merge {
namespace {

Status refuse(Combine combine, uint32_t shard_type) {
  // avg and the variances of real: the shards' sums of real are rounded to real.
  const bool arithmetic = shard_type == oid::kFloat4 && combine != Combine::Min && combine != Combine::Max;
  return Status::client("0A000", std::string(combine_name(combine)) + " of " + type_name(shard_type) +
                                     " values cannot be combined from the shards' partial results" +
                                     (arithmetic ? "; cast its argument to double precision instead" : ""));
}

bool parse_int64(std::string_view text, int64_t& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

Status bad_partial(std::string_view text) {
  return Status::server(
      "22P02", "cannot read a shard's partial aggregate \"" + std::string(text.substr(0, 64)) + "\"");
}

// A shard's avg count column (0 when unreadable: checked by add()).
int64_t n_partial(const std::optional<std::string>& count) {
  int64_t n = 0;
  if (count) parse_int64(*count, n);
  return n;
}

Status overflow() { return Status::client("22003", "value out of range: overflow"); }

// sum/avg(DISTINCT x): the type whose shard partial a value of x is read as (sum of int4 is
// int8, of int8 numeric; avg adds integers exactly); 0 when neither is defined for x's type.
uint32_t distinct_partial_type(Combine combine, uint32_t element) {
  const bool sum = combine == Combine::SumDistinct;
  switch (element) {
    case oid::kInt2:
    case oid::kInt4: return oid::kInt8;
    case oid::kInt8: return sum ? oid::kNumeric : oid::kInt8;
    case oid::kNumeric: return oid::kNumeric;
    case oid::kFloat4: return sum ? oid::kFloat4 : oid::kFloat8;
    case oid::kFloat8: return oid::kFloat8;
    default: return 0;
  }
}

}  // namespace

// sum: float8pl/float4pl from the first partial on (so a sum of -0 stays -0), 22003 when finite
// partials overflow. avg and the variances: float8_combine's Sx from 0 and Sxx, 22003 when
// either overflows. For avg a shard's own Sxx is not known (its overflow is the shard's error: the
// shards' count column evaluates avg), so only the spread between the shards' means counts; a
// variance's `shard_sxx` is the shard's var_pop times its count.
Status Accumulator::add_real(double partial, int64_t n, double shard_sxx) {
  if (combine_ == Combine::Sum) {
    const double sum = !seen_ ? partial : real_ + partial;
    if (type_ == oid::kFloat4) {
      const auto single = static_cast<float>(sum);  // float4pl adds in float
      if (std::isinf(single) && !std::isinf(real_) && !std::isinf(partial) && seen_) return overflow();
      real_ = single;
      return Status::ok();
    }
    if (std::isinf(sum) && !std::isinf(real_) && !std::isinf(partial) && seen_) return overflow();
    real_ = sum;
    return Status::ok();
  }
  const int64_t before = count_ - n;  // add() counted this shard's rows already
  if (n == 0) return Status::ok();
  // A shard that read an infinity or NaN has Sxx NaN (float8_accum), and so has the combination.
  if (!std::isfinite(partial)) shard_sxx = std::nan("");
  if (before == 0) {
    real_ = 0.0 + partial;
    sxx_ = shard_sxx;
    return Status::ok();
  }
  const double sum = real_ + partial;
  const double spread = real_ / static_cast<double>(before) - partial / static_cast<double>(n);
  const double sxx =
      sxx_ + shard_sxx +
      static_cast<double>(before) * static_cast<double>(n) * spread * spread / static_cast<double>(count_);
  if ((std::isinf(sum) && !std::isinf(real_) && !std::isinf(partial)) ||
      (std::isinf(sxx) && !std::isinf(sxx_)))
    return overflow();
  real_ = sum;
  sxx_ = sxx;
  return Status::ok();
}

Result<uint32_t> combined_type(Combine combine, uint32_t shard_type) {
  switch (combine) {
    case Combine::Key:
    case Combine::Expression: return shard_type;  // an Expression's: Merger::type_expressions()
    case Combine::Count: return oid::kInt8;
    case Combine::CountDistinct:
      // The shards' array_agg(DISTINCT x): its elements must be a type the merge compares.
      if (!is_comparable_type(array_element_type(shard_type)))
        return Status::client("0A000", "count(DISTINCT) of a type other than a built-in scalar (array OID " +
                                           std::to_string(shard_type) +
                                           ") cannot be combined across shards; add a shard key value");
      return oid::kInt8;
    case Combine::BoolAnd:
    case Combine::BoolOr: return oid::kBool;
    case Combine::SumDistinct:
    case Combine::AvgDistinct: {
      const uint32_t element = array_element_type(shard_type);
      const uint32_t partial = distinct_partial_type(combine, element);
      if (partial == 0)
        return Status::client("0A000", std::string(combine == Combine::SumDistinct ? "sum" : "avg") +
                                           "(DISTINCT) of " +
                                           (element == 0 ? "this type" : type_name(element)) +
                                           " values cannot be combined across shards; add a shard key value");
      return combined_type(combine == Combine::SumDistinct ? Combine::Sum : Combine::Avg, partial);
    }
    case Combine::ArrayAgg:
      // The shards' array_agg is the client's: its elements must be a type with a binary form.
      if (array_element_type(shard_type) == 0)
        return Status::client("0A000", "array_agg of a type other than a built-in scalar (array OID " +
                                           std::to_string(shard_type) +
                                           ") cannot be merged across shards; add a shard key value");
      return shard_type;
    case Combine::StringAgg:
      if (array_element_type(shard_type) == oid::kText || array_element_type(shard_type) == oid::kVarchar)
        return oid::kText;
      return Status::client("0A000",
                            "string_agg of values other than text or varchar (array OID " +
                                std::to_string(shard_type) +
                                ") cannot be merged across shards; cast its argument to text instead");
    case Combine::Min:
    case Combine::Max:
      if (!is_comparable_type(shard_type)) return refuse(combine, shard_type);
      return shard_type;
    case Combine::Sum:
      if (shard_type == oid::kInt8 || shard_type == oid::kNumeric || shard_type == oid::kFloat8 ||
          shard_type == oid::kFloat4)
        return shard_type;
      return refuse(combine, shard_type);
    case Combine::Avg:
    case Combine::VarSamp:
    case Combine::VarPop:
    case Combine::StddevSamp:
    case Combine::StddevPop:
      // The shards' sum: bigint of smaller integers, numeric of bigint and numeric.
      if (shard_type == oid::kInt8 || shard_type == oid::kNumeric) return oid::kNumeric;
      if (shard_type == oid::kFloat8) return oid::kFloat8;
      return refuse(combine, shard_type);
  }
  return refuse(combine, shard_type);
}

Status Accumulator::add(const std::optional<std::string>& value, const std::optional<std::string>& count) {
  if (combine_ == Combine::Key || combine_ == Combine::Expression) return Status::ok();
  if (combine_ == Combine::Avg) {
    int64_t n = 0;
    if (!count || !parse_int64(*count, n)) return bad_partial(count ? *count : "NULL");
    count_ += n;
  }
  if (!value) return Status::ok();
  const std::string& text = *value;
  switch (combine_) {
    case Combine::Count: {
      int64_t n = 0;
      if (!parse_int64(text, n)) return bad_partial(text);
      integer_ += n;
      break;
    }
    case Combine::Sum:
    case Combine::Avg:
      if (type_ == oid::kFloat8 || type_ == oid::kFloat4) {
        const double partial = type_ == oid::kFloat4 ? static_cast<double>(std::strtof(text.c_str(), nullptr))
                                                     : std::strtod(text.c_str(), nullptr);
        if (Status s = add_real(partial, n_partial(count), 0.0); !s) return s;
      } else if (type_ == oid::kInt8 && combine_ == Combine::Sum) {
        int64_t n = 0;
        if (!parse_int64(text, n)) return bad_partial(text);
        integer_ += n;
        if (integer_ > INT64_MAX || integer_ < INT64_MIN)
          return Status::client("22003", "bigint out of range");
      } else {
        auto d = Decimal::parse(text);
        if (!d) return bad_partial(text);
        decimal_ = decimal_.add(*d);
      }
      break;
    case Combine::Min:
    case Combine::Max: {
      auto decoded = decode_text(type_, text, dates_);
      if (!decoded) return decoded.status();
      const int c = best_ ? decoded->compare(*best_) : 0;
      if (!best_ || (combine_ == Combine::Min ? c < 0 : c > 0)) {
        best_ = std::move(decoded.value());
        text_ = text;
      }
      break;
    }
    case Combine::CountDistinct:
    case Combine::SumDistinct:
    case Combine::AvgDistinct:
      if (Status s = distinct_.add_array(array_element_type(type_), text, dates_, budget_); !s) return s;
      break;
    case Combine::BoolAnd:
    case Combine::BoolOr: {
      const bool b = text == "t";
      flag_ = !seen_ ? b : (combine_ == Combine::BoolAnd ? (flag_ && b) : (flag_ || b));
      break;
    }
    default: break;
  }
  seen_ = true;
  return Status::ok();
}

std::optional<std::string> Accumulator::result() const {
  switch (combine_) {
    case Combine::Count: return std::to_string(static_cast<long long>(integer_));
    case Combine::CountDistinct: return std::to_string(static_cast<long long>(distinct_.size()));
    case Combine::Key:
    case Combine::Expression: return std::nullopt;
    case Combine::SumDistinct:
    case Combine::AvgDistinct: return finished_;
    case Combine::ArrayAgg: return ordered_.array_text();
    case Combine::StringAgg: return ordered_.joined(separator_);
    case Combine::Min:
    case Combine::Max:
      if (!seen_) return std::nullopt;
      return text_;
    case Combine::BoolAnd:
    case Combine::BoolOr:
      if (!seen_) return std::nullopt;
      return std::string(flag_ ? "t" : "f");
    case Combine::Sum:
      if (!seen_) return std::nullopt;
      if (type_ == oid::kFloat8) return format_float8(real_);
      if (type_ == oid::kFloat4) return format_float4(static_cast<float>(real_));
      if (type_ == oid::kInt8) return std::to_string(static_cast<long long>(integer_));
      return decimal_.text();
    case Combine::Avg:
      if (!seen_ || count_ == 0) return std::nullopt;
      if (type_ == oid::kFloat8) return format_float8(real_ / static_cast<double>(count_));
      return decimal_.divide_for_avg(count_).text();
    default: return variance_result();
  }
}

// The distinct values in order, through sum's or avg's own accumulator as one partial each
// (float4pl / float8pl from the first value on, exact integer and numeric sums, numeric_div for
// avg); avg of real and float8 as float8_accum adds its inputs.
Status Accumulator::finish() {
  if (combine_ != Combine::SumDistinct && combine_ != Combine::AvgDistinct) return Status::ok();
  const uint32_t element = array_element_type(type_);
  auto values = distinct_.sorted_values(element, dates_);
  if (!values) return values.status();
  const uint32_t partial = distinct_partial_type(combine_, element);
  if (combine_ == Combine::AvgDistinct && partial == oid::kFloat8) {
    for (const std::string& text : *values) {
      const double value = element == oid::kFloat4 ? static_cast<double>(std::strtof(text.c_str(), nullptr))
                                                   : std::strtod(text.c_str(), nullptr);
      if (Status s = accumulate_real(value); !s) return s;
    }
    if (count_ > 0) finished_ = format_float8(real_ / static_cast<double>(count_));
    return Status::ok();
  }
  Accumulator total(combine_ == Combine::SumDistinct ? Combine::Sum : Combine::Avg, partial, dates_);
  const std::optional<std::string> one("1");
  for (const std::string& text : *values) {
    if (Status s = total.add(text, one); !s) return s;
  }
  finished_ = total.result();
  return Status::ok();
}

// float8_accum's N, Sx and Sxx: 22003 when Sx or Sxx overflows from finite values.
Status Accumulator::accumulate_real(double value) {
  const double n = static_cast<double>(count_) + 1.0;
  const double sx = real_ + value;
  double sxx = sxx_;
  if (count_ > 0) {
    const double tmp = value * n - sx;
    sxx += tmp * tmp / (n * static_cast<double>(count_));
    if (std::isinf(sx) || std::isinf(sxx)) {
      if (!std::isinf(real_) && !std::isinf(value)) return overflow();
      sxx = std::nan("");
    }
  } else if (std::isnan(value) || std::isinf(value)) {
    sxx = std::nan("");
  }
  ++count_;
  real_ = sx;
  sxx_ = sxx;
  return Status::ok();
}

Status Accumulator::add_variance(const std::optional<std::string>& sum,
                                 const std::optional<std::string>& count,
                                 const std::optional<std::string>& squares,
                                 const std::optional<std::string>& var_pop) {
  int64_t n = 0;
  if (!count || !parse_int64(*count, n) || n < 0) return bad_partial(count ? *count : "NULL");
  if (n == 0) return Status::ok();
  if (!sum || !var_pop || (!squares && type_ != oid::kFloat8)) return bad_partial("NULL");
  count_ += n;
  seen_ = true;
  if (type_ == oid::kFloat8) {  // no sum of squares: float8_combine needs none
    const double shard_sxx = std::strtod(var_pop->c_str(), nullptr) * static_cast<double>(n);
    return add_real(std::strtod(sum->c_str(), nullptr), n, shard_sxx);
  }
  auto sx = Decimal::parse(*sum);
  auto sxx = Decimal::parse(*squares);
  if (!sx) return bad_partial(*sum);
  if (!sxx) return bad_partial(*squares);
  decimal_ = decimal_.add(*sx);
  squares_ = squares_.add(*sxx);
  return Status::ok();
}

// float8: float8_var_samp / _pop (Sxx / (N - 1) or Sxx / N) and sqrt. Integers and numeric:
// numeric_stddev_internal's exact (N * sum(x*x) - sum(x)^2) / (N * (N - 1)) or / (N * N) at
// select_div_scale, 0 when the numerator is not positive, NaN after a NaN or infinity, then
// sqrt_var at the quotient's scale.
std::optional<std::string> Accumulator::variance_result() const {
  const bool sample = combine_ == Combine::VarSamp || combine_ == Combine::StddevSamp;
  const bool root = combine_ == Combine::StddevSamp || combine_ == Combine::StddevPop;
  if (count_ == 0) return std::nullopt;
  if (type_ == oid::kFloat8) {
    if (sample && count_ <= 1) return std::nullopt;
    const double v = sxx_ / (static_cast<double>(count_) - (sample ? 1.0 : 0.0));
    return format_float8(root ? std::sqrt(v) : v);
  }
  if (decimal_.is_special() || squares_.is_special()) return std::string("NaN");
  if (sample && count_ <= 1) return std::nullopt;
  const int rscale = decimal_.scale() * 2;
  const Decimal n = Decimal::from_int(count_);
  const Decimal numerator = n.multiply(squares_).with_scale(rscale).subtract(decimal_.multiply(decimal_));
  if (numerator.sign() <= 0) return std::string("0");
  const Decimal denominator = n.multiply(sample ? Decimal::from_int(count_ - 1) : n);
  const Decimal variance = numerator.divide(denominator);
  return (root ? variance.sqrt(variance.scale()) : variance).text();
}

}  // namespace sw::merge
