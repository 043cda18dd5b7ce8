// twopc/gid.h and twopc/decision.h: which gids are shardwire's, the instance inside a gid, leg
// gids, the decision names stored in shardwire.transactions.
#include "twopc/gid.h"

#include <doctest/doctest.h>

#include <string>

#include "twopc/decision.h"

using namespace sw::twopc;

TEST_CASE("only gids with the shardwire_ prefix are shardwire's") {
  CHECK(is_shardwire_gid("shardwire_0123456789abcdef_0_1"));
  CHECK(is_shardwire_gid("shardwire_"));
  CHECK_FALSE(is_shardwire_gid("shardwire"));
  CHECK_FALSE(is_shardwire_gid("Shardwire_0123456789abcdef_0_1"));
  CHECK_FALSE(is_shardwire_gid("app_shardwire_x"));
  CHECK_FALSE(is_shardwire_gid(""));
}

TEST_CASE("gid_instance returns the instance part of a well-formed gid") {
  CHECK(gid_instance("shardwire_0123456789abcdef_3_42") == "0123456789abcdef");
  CHECK(gid_instance("shardwire_abc_0_1") == "abc");
  CHECK(gid_instance("shardwire__0_1") == "");
  CHECK(gid_instance("shardwire_noseparator") == "");
  CHECK(gid_instance("other_0123456789abcdef_0_1") == "");
}

TEST_CASE("leg gids map back to their transaction's gid") {
  const std::string gid = "shardwire_0123456789abcdef_3_42";
  CHECK(leg_gid(gid, 0) == gid + "_0");
  CHECK(leg_gid(gid, 12) == gid + "_12");
  CHECK(transaction_gid(gid) == gid);
  CHECK(transaction_gid(leg_gid(gid, 1)) == gid);
  CHECK(transaction_gid(gid + "_s_1") == gid);
  CHECK(gid_instance(leg_gid(gid, 1)) == "0123456789abcdef");
  // Not of the full form: left as they are.
  CHECK(transaction_gid("shardwire_abc") == "shardwire_abc");
  CHECK(transaction_gid("shardwire_abc_1") == "shardwire_abc_1");
  CHECK(transaction_gid("app_a_b_c_d") == "app_a_b_c_d");
}

TEST_CASE("decision names are the values the catalog's CHECK admits") {
  CHECK(std::string(decision_name(TwoPhaseDecision::Commit)) == "commit");
  CHECK(std::string(decision_name(TwoPhaseDecision::Abort)) == "abort");
}
