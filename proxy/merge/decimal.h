// Exact decimal values as PostgreSQL's numeric prints them (text format): parse, compare, add,
// multiply, and the final division and square root of avg and the variances with PostgreSQL's
// result scales. Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sw::merge {

// 128-bit integers (GCC and Clang) for exact sums and time spans.
__extension__ using Int128 = __int128;
__extension__ using UInt128 = unsigned __int128;

class Decimal {
 public:
  enum class Special : uint8_t { None, NaN, PosInf, NegInf };

  // "-12.340", "NaN", "Infinity", "-Infinity", "1e5"; nullopt when not a number.
  static std::optional<Decimal> parse(std::string_view text);
  static Decimal from_int(int64_t value);

  // PostgreSQL's numeric order: -Infinity < finite < Infinity < NaN; 1.0 = 1.00.
  int compare(const Decimal& other) const;
  // Exact sum; scale max of both (as numeric_add). NaN absorbs; Inf + -Inf is NaN.
  Decimal add(const Decimal& other) const;
  // this / count rounded half away from zero to numeric_div's scale (select_div_scale): the
  // result of PostgreSQL's avg over values whose sum is this. count > 0.
  Decimal divide_for_avg(int64_t count) const;
  // Finite values only (special ones give NaN). Exact product, scale the sum of both (mul_var
  // at full scale); exact difference, scale the max of both.
  Decimal multiply(const Decimal& other) const;
  Decimal subtract(const Decimal& other) const;
  // this / divisor (non-zero) rounded half away from zero to select_div_scale's scale (div_var
  // with rounding).
  Decimal divide(const Decimal& divisor) const;
  // The square root of a non-negative value rounded half away from zero to `rscale` digits after
  // the point (sqrt_var's result at rscale).
  Decimal sqrt(int rscale) const;
  // round(numeric, scale): rounded half away from zero to `scale` digits after the point (before
  // it when negative), printed with max(scale, 0) of them. Special values stay.
  Decimal round(int scale) const;
  // The same value printed with `scale` digits after the point (scale >= this one's).
  Decimal with_scale(int scale) const;

  int scale() const { return scale_; }
  int sign() const { return digits_ == "0" ? 0 : (negative_ ? -1 : 1); }
  bool is_special() const { return special_ != Special::None; }

  std::string text() const;       // as numeric_out prints it (scale digits after the point)
  std::string canonical() const;  // equal values, equal strings (trailing zeros dropped)
  bool is_nan() const { return special_ == Special::NaN; }

 private:
  Special special_ = Special::None;
  bool negative_ = false;
  std::string digits_ = "0";  // the unscaled magnitude, no leading zeros ("0" for zero)
  int scale_ = 0;             // digits after the point
};

}  // namespace sw::merge
