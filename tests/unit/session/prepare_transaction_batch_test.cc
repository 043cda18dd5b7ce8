// Recognising an extended-protocol batch that runs PREPARE TRANSACTION (session/
// prepare_transaction_batch.h): the shapes postgres.js and libpq send, a batch still arriving,
// and batches that are something else.
#include "session/prepare_transaction_batch.h"

#include <doctest/doctest.h>

#include <string>

#include "client_messages.h"

using sw::session::find_prepare_transaction_batch;
using Kind = sw::session::PrepareTransactionBatch::Kind;

using sw::test::bind;
using sw::test::describe;
using sw::test::execute;
using sw::test::parse;
using sw::test::sync_message;

namespace {

const sw::wire::Limits kLimits{};

}  // namespace

TEST_CASE("postgres.js and libpq batches of PREPARE TRANSACTION are found, through their Sync") {
  const std::string text = "prepare transaction 'g1'";
  // postgres.js with prepared statements: a named Parse, Describe statement, Bind, Execute, Sync.
  const std::string named = parse("s1", text) + describe('S', "s1") + bind("s1") + execute() + sync_message();
  // libpq PQexecParams / postgres.js without: unnamed, Describe portal.
  const std::string unnamed = parse("", text) + bind("") + describe('P', "") + execute() + sync_message();
  for (const std::string& batch : {named, unnamed}) {
    const std::string input = batch + "Q";  // the next request follows
    auto found = find_prepare_transaction_batch(input, kLimits);
    CHECK(found.kind == Kind::Found);
    CHECK(found.size == batch.size());
    CHECK(found.text == text);
    // Cut anywhere after the Parse: the rest is awaited.
    for (size_t cut : {parse("s1", text).size() + 1, batch.size() - 1})
      CHECK(find_prepare_transaction_batch(batch.substr(0, cut), kLimits).kind == Kind::NeedMore);
  }
  auto spaced = find_prepare_transaction_batch(
      parse("", "  PREPARE\n Transaction 'x'") + bind("") + execute() + sync_message(), kLimits);
  CHECK(spaced.kind == Kind::Found);
}

TEST_CASE("other batches and other shapes are not taken") {
  const std::string tail = bind("") + execute() + sync_message();
  CHECK(find_prepare_transaction_batch(parse("", "SELECT 1") + tail, kLimits).kind == Kind::Other);
  CHECK(find_prepare_transaction_batch(parse("", "PREPARE p AS SELECT 1") + tail, kLimits).kind ==
        Kind::Other);
  CHECK(find_prepare_transaction_batch(parse("", "\"prepare\" transaction 'x'") + tail, kLimits).kind ==
        Kind::Other);
  const std::string p = parse("s", "PREPARE TRANSACTION 'x'");
  // A Parse alone (PQprepare), a Bind of another statement, no Execute, more before the Sync.
  CHECK(find_prepare_transaction_batch(p + sync_message(), kLimits).kind == Kind::Other);
  CHECK(find_prepare_transaction_batch(p + bind("t") + execute() + sync_message(), kLimits).kind ==
        Kind::Other);
  CHECK(find_prepare_transaction_batch(p + bind("s") + sync_message(), kLimits).kind == Kind::Other);
  CHECK(find_prepare_transaction_batch(p + bind("s") + execute() + parse("", "SELECT 1"), kLimits).kind ==
        Kind::Other);
  CHECK(find_prepare_transaction_batch(p + describe('S', "other") + bind("s") + execute() + sync_message(),
                                       kLimits)
            .kind == Kind::Other);
  CHECK(find_prepare_transaction_batch(bind("s") + execute() + sync_message(), kLimits).kind == Kind::Other);
}
