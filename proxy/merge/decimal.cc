#include "merge/decimal.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

namespace sw::merge {
namespace {

std::string strip_leading_zeros(const std::string& digits) {
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return "0";
  return digits.substr(first);
}

int compare_magnitude(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string add_magnitude(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry != 0; ++i) {
    int d = carry;
    if (i < a.size()) d += a[a.size() - 1 - i] - '0';
    if (i < b.size()) d += b[b.size() - 1 - i] - '0';
    out.push_back(static_cast<char>('0' + d % 10));
    carry = d / 10;
  }
  std::reverse(out.begin(), out.end());
  return strip_leading_zeros(out);
}

// a - b with a >= b.
std::string subtract_magnitude(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int d = (a[a.size() - 1 - i] - '0') - borrow;
    if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
    borrow = d < 0 ? 1 : 0;
    out.push_back(static_cast<char>('0' + (d + 10) % 10));
  }
  std::reverse(out.begin(), out.end());
  return strip_leading_zeros(out);
}

std::string multiply_magnitude(const std::string& a, const std::string& b) {
  std::vector<int> out(a.size() + b.size(), 0);
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) out[i + j + 1] += (a[i] - '0') * (b[j] - '0');
  }
  for (size_t k = out.size(); k-- > 1;) {
    out[k - 1] += out[k] / 10;
    out[k] %= 10;
  }
  std::string text;
  for (int d : out) text.push_back(static_cast<char>('0' + d));
  return strip_leading_zeros(text);
}

// Magnitudes of at most 38 digits fit in 128 bits: the fast path of division and square root.
constexpr size_t kWideDigits = 38;

UInt128 to_wide(const std::string& digits) {
  UInt128 value = 0;
  for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
  return value;
}

std::string from_wide(UInt128 value) {
  std::string out;
  do {
    out.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  std::reverse(out.begin(), out.end());
  return out;
}

// Truncated quotient of magnitudes (divisor not "0"), long division; `remainder` what is left.
std::string divide_magnitude(const std::string& numerator, const std::string& divisor,
                             std::string& remainder) {
  if (numerator.size() <= kWideDigits && divisor.size() <= kWideDigits) {
    const UInt128 n = to_wide(numerator), d = to_wide(divisor);
    remainder = from_wide(n % d);
    return from_wide(n / d);
  }
  std::string quotient;
  remainder = "0";
  for (char c : numerator) {
    remainder.push_back(c);
    remainder = strip_leading_zeros(remainder);
    int digit = 0;
    while (compare_magnitude(remainder, divisor) >= 0) {
      remainder = subtract_magnitude(remainder, divisor);
      ++digit;
    }
    quotient.push_back(static_cast<char>('0' + digit));
  }
  return strip_leading_zeros(quotient);
}

// floor(sqrt(n)) of a magnitude: from a long double estimate, corrected, when n fits in 128
// bits; else digit pair by digit pair.
std::string isqrt_magnitude(const std::string& n) {
  if (n.size() <= kWideDigits) {
    const UInt128 value = to_wide(n);
    auto root = static_cast<UInt128>(std::sqrt(static_cast<long double>(value)));
    while (root > 0 && root * root > value) --root;
    while ((root + 1) * (root + 1) <= value) ++root;
    return from_wide(root);
  }
  const std::string padded = n.size() % 2 == 0 ? n : "0" + n;
  std::string root = "0", remainder = "0";
  for (size_t i = 0; i < padded.size(); i += 2) {
    remainder.append(padded, i, 2);
    remainder = strip_leading_zeros(remainder);
    const std::string twenty_root = multiply_magnitude(root, "20");
    int digit = 9;
    std::string used;
    for (; digit > 0; --digit) {
      const std::string d(1, static_cast<char>('0' + digit));
      used = multiply_magnitude(add_magnitude(twenty_root, d), d);
      if (compare_magnitude(used, remainder) <= 0) break;
    }
    if (digit > 0) remainder = subtract_magnitude(remainder, used);
    root.push_back(static_cast<char>('0' + digit));
    root = strip_leading_zeros(root);
  }
  return root;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// Weight and value of the first non-zero base-10000 digit, as numeric's NBASE representation
// of `digits` (unscaled) at `scale` has them.
void first_nbase_digit(const std::string& digits, int scale, int& weight, int& first) {
  weight = 0;
  first = 0;
  if (digits == "0") return;
  const int int_len = static_cast<int>(digits.size()) - scale;
  if (int_len > 0) {
    weight = (int_len - 1) / 4;
    const int lead = (int_len - 1) % 4 + 1;
    first = std::stoi(digits.substr(0, static_cast<size_t>(lead)));
    return;
  }
  std::string fraction = std::string(static_cast<size_t>(-int_len), '0') + digits;
  while (fraction.size() % 4 != 0) fraction.push_back('0');
  for (size_t g = 0; g * 4 < fraction.size(); ++g) {
    const int value = std::stoi(fraction.substr(g * 4, 4));
    if (value != 0) {
      weight = -static_cast<int>(g) - 1;
      first = value;
      return;
    }
  }
}

}  // namespace

std::optional<Decimal> Decimal::parse(std::string_view text) {
  Decimal d;
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (iequals(text, "NaN")) {
    d.special_ = Special::NaN;
    return d;
  }
  if (iequals(body, "Infinity") || iequals(body, "inf")) {
    d.special_ = negative ? Special::NegInf : Special::PosInf;
    return d;
  }
  std::string digits;
  int scale = 0;
  bool point = false, any = false;
  size_t i = 0;
  for (; i < body.size(); ++i) {
    char c = body[i];
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
      any = true;
      if (point) ++scale;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  if (i < body.size()) {
    if (body[i] != 'e' && body[i] != 'E') return std::nullopt;
    int exponent = 0;
    try {
      exponent = std::stoi(std::string(body.substr(i + 1)));
    } catch (...) {
      return std::nullopt;
    }
    if (exponent > 1000 || exponent < -1000) return std::nullopt;
    scale -= exponent;
    if (scale < 0) {
      digits.append(static_cast<size_t>(-scale), '0');
      scale = 0;
    }
  }
  d.digits_ = strip_leading_zeros(digits);
  d.scale_ = scale;
  d.negative_ = negative && d.digits_ != "0";
  return d;
}

Decimal Decimal::from_int(int64_t value) {
  Decimal d;
  d.negative_ = value < 0;
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  d.digits_ = std::to_string(magnitude);
  return d;
}

int Decimal::compare(const Decimal& other) const {
  auto rank = [](const Decimal& d) {
    switch (d.special_) {
      case Special::NegInf: return 0;
      case Special::None: return 1;
      case Special::PosInf: return 2;
      case Special::NaN: return 3;
    }
    return 1;
  };
  if (rank(*this) != rank(other)) return rank(*this) < rank(other) ? -1 : 1;
  if (special_ != Special::None) return 0;
  if (negative_ != other.negative_) return negative_ ? -1 : 1;
  const int scale = std::max(scale_, other.scale_);
  std::string a = digits_ + std::string(static_cast<size_t>(scale - scale_), '0');
  std::string b = other.digits_ + std::string(static_cast<size_t>(scale - other.scale_), '0');
  int c = compare_magnitude(strip_leading_zeros(a), strip_leading_zeros(b));
  return negative_ ? -c : c;
}

Decimal Decimal::add(const Decimal& other) const {
  Decimal out;
  if (special_ == Special::NaN || other.special_ == Special::NaN) {
    out.special_ = Special::NaN;
    return out;
  }
  if (special_ != Special::None || other.special_ != Special::None) {
    if (special_ != Special::None && other.special_ != Special::None && special_ != other.special_) {
      out.special_ = Special::NaN;
    } else {
      out.special_ = special_ != Special::None ? special_ : other.special_;
    }
    return out;
  }
  out.scale_ = std::max(scale_, other.scale_);
  std::string a = strip_leading_zeros(digits_ + std::string(static_cast<size_t>(out.scale_ - scale_), '0'));
  std::string b =
      strip_leading_zeros(other.digits_ + std::string(static_cast<size_t>(out.scale_ - other.scale_), '0'));
  if (negative_ == other.negative_) {
    out.digits_ = add_magnitude(a, b);
    out.negative_ = negative_;
  } else if (compare_magnitude(a, b) >= 0) {
    out.digits_ = subtract_magnitude(a, b);
    out.negative_ = negative_;
  } else {
    out.digits_ = subtract_magnitude(b, a);
    out.negative_ = other.negative_;
  }
  if (out.digits_ == "0") out.negative_ = false;
  return out;
}

Decimal Decimal::divide_for_avg(int64_t count) const { return divide(from_int(count)); }

Decimal Decimal::multiply(const Decimal& other) const {
  Decimal out;
  if (special_ != Special::None || other.special_ != Special::None) {
    out.special_ = Special::NaN;
    return out;
  }
  out.digits_ = multiply_magnitude(digits_, other.digits_);
  out.scale_ = scale_ + other.scale_;
  out.negative_ = negative_ != other.negative_ && out.digits_ != "0";
  return out;
}

Decimal Decimal::subtract(const Decimal& other) const {
  Decimal negated = other;
  negated.negative_ = !other.negative_ && other.digits_ != "0";
  if (other.special_ == Special::PosInf) negated.special_ = Special::NegInf;
  if (other.special_ == Special::NegInf) negated.special_ = Special::PosInf;
  return add(negated);
}

Decimal Decimal::with_scale(int scale) const {
  Decimal out = *this;
  if (special_ != Special::None || scale <= scale_) return out;
  out.digits_ = strip_leading_zeros(digits_ + std::string(static_cast<size_t>(scale - scale_), '0'));
  out.scale_ = scale;
  return out;
}

Decimal Decimal::round(int scale) const {
  if (special_ != Special::None) return *this;
  if (scale >= scale_) return with_scale(std::max(scale, 0));
  const auto drop = static_cast<size_t>(scale_ - scale);
  std::string digits = digits_;
  if (digits.size() < drop + 1) digits.insert(0, drop + 1 - digits.size(), '0');
  std::string kept = digits.substr(0, digits.size() - drop);
  if (digits[digits.size() - drop] >= '5') kept = add_magnitude(kept, "1");  // half away from zero
  if (scale < 0) kept.append(static_cast<size_t>(-scale), '0');
  Decimal out;
  out.digits_ = strip_leading_zeros(kept);
  out.scale_ = std::max(scale, 0);
  out.negative_ = negative_ && out.digits_ != "0";
  return out;
}

Decimal Decimal::divide(const Decimal& divisor) const {
  Decimal out;
  if (special_ != Special::None || divisor.special_ != Special::None || divisor.digits_ == "0") {
    out.special_ = special_ == Special::None ? Special::NaN : special_;  // avg of infinities: infinite
    if (divisor.special_ != Special::None || divisor.digits_ == "0") out.special_ = Special::NaN;
    return out;
  }
  int weight1 = 0, first1 = 0, weight2 = 0, first2 = 0;
  first_nbase_digit(digits_, scale_, weight1, first1);
  first_nbase_digit(divisor.digits_, divisor.scale_, weight2, first2);
  int qweight = weight1 - weight2;
  if (first1 <= first2) --qweight;
  int rscale = 16 - qweight * 4;  // NUMERIC_MIN_SIG_DIGITS - qweight * DEC_DIGITS
  rscale = std::max({rscale, scale_, divisor.scale_});
  rscale = std::clamp(rscale, 0, 1000);
  // digits_ / 10^scale_ / (d / 10^dscale) at rscale: digits_ * 10^(rscale - scale_ + dscale) / d.
  const int shift = rscale - scale_ + divisor.scale_;
  const std::string numerator = digits_ + std::string(static_cast<size_t>(std::max(shift, 0)), '0');
  const std::string denominator =
      divisor.digits_ + std::string(static_cast<size_t>(std::max(-shift, 0)), '0');
  std::string remainder;
  std::string quotient = divide_magnitude(numerator, denominator, remainder);
  if (compare_magnitude(add_magnitude(remainder, remainder), denominator) >= 0)
    quotient = add_magnitude(quotient, "1");
  out.digits_ = quotient;
  out.scale_ = rscale;
  out.negative_ = negative_ != divisor.negative_ && quotient != "0";
  return out;
}

Decimal Decimal::sqrt(int rscale) const {
  Decimal out;
  if (special_ != Special::None || negative_) {
    out.special_ = Special::NaN;
    return out;
  }
  // floor(sqrt(v) * 10^(rscale + 1)) = isqrt(digits_ * 10^(2 * rscale + 2 - scale_)) (a floor of
  // the radicand keeps the floor of the root), then the last digit rounds.
  const int shift = 2 * rscale + 2 - scale_;
  std::string radicand = digits_;
  if (shift >= 0) {
    radicand += std::string(static_cast<size_t>(shift), '0');
  } else {
    radicand = static_cast<size_t>(-shift) >= radicand.size()
                   ? "0"
                   : radicand.substr(0, radicand.size() - static_cast<size_t>(-shift));
  }
  std::string root = isqrt_magnitude(strip_leading_zeros(radicand));
  const bool up = root.back() >= '5';
  root = root.size() > 1 ? root.substr(0, root.size() - 1) : "0";
  if (up) root = add_magnitude(root, "1");
  out.digits_ = strip_leading_zeros(root);
  out.scale_ = rscale;
  return out;
}

std::string Decimal::text() const {
  switch (special_) {
    case Special::NaN: return "NaN";
    case Special::PosInf: return "Infinity";
    case Special::NegInf: return "-Infinity";
    case Special::None: break;
  }
  std::string digits = digits_;
  if (scale_ > 0) {
    if (digits.size() <= static_cast<size_t>(scale_))
      digits.insert(0, static_cast<size_t>(scale_) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale_), 1, '.');
  }
  return negative_ ? "-" + digits : digits;
}

std::string Decimal::canonical() const {
  if (special_ != Special::None) return text();
  Decimal copy = *this;
  while (copy.scale_ > 0 && copy.digits_.size() > 1 && copy.digits_.back() == '0') {
    copy.digits_.pop_back();
    --copy.scale_;
  }
  if (copy.digits_ == "0") copy.scale_ = 0;
  return copy.text();
}

}  // namespace sw::merge
