#include "twopc/gid.h"

namespace sw::twopc {

std::string two_phase_gid(std::string_view instance, int worker, uint64_t seq) {
  return std::string(kTwoPhaseGidPrefix) + std::string(instance) + "_" + std::to_string(worker) + "_" +
         std::to_string(seq);
}

bool is_shardwire_gid(std::string_view gid) { return gid.starts_with(kTwoPhaseGidPrefix); }

std::string leg_gid(std::string_view gid, size_t leg) { return std::string(gid) + "_" + std::to_string(leg); }

std::string transaction_gid(std::string_view prepared_gid) {
  if (!is_shardwire_gid(prepared_gid)) return std::string(prepared_gid);
  // shardwire _ instance _ worker _ seq [_ leg]: the 4th separator ends the transaction's gid.
  size_t at = 0;
  for (int separator = 0; separator < 4; ++separator) {
    at = prepared_gid.find('_', separator == 0 ? 0 : at + 1);
    if (at == std::string_view::npos) return std::string(prepared_gid);
  }
  return std::string(prepared_gid.substr(0, at));
}

std::string gid_instance(std::string_view gid) {
  if (!is_shardwire_gid(gid)) return {};
  std::string_view rest = gid.substr(kTwoPhaseGidPrefix.size());
  size_t end = rest.find('_');
  if (end == std::string_view::npos || end == 0) return {};
  return std::string(rest.substr(0, end));
}

}  // namespace sw::twopc
