// The admin command language: every verb, the spellings the parser tolerates, and every
// malformed form (08P01 with a message that points at SHOW HELP or the expected syntax).
#include "admin/command.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

using namespace sw::admin;

namespace {

Command parse_ok(const std::string& text) {
  auto command = parse_command(text);
  REQUIRE_MESSAGE(command.is_ok(), "'" << text << "': " << (command.is_ok() ? "" : command.status().message));
  return *command;
}

// 08P01 from the client, and a message that tells what to type: SHOW HELP or `syntax`.
void expect_invalid(const std::string& text, const std::string& syntax = "SHOW HELP") {
  CAPTURE(text);
  auto command = parse_command(text);
  REQUIRE_FALSE(command.is_ok());
  CHECK(command.status().sqlstate == "08P01");
  CHECK(command.status().fault == sw::Fault::Client);
  const std::string& message = command.status().message;
  CAPTURE(message);
  CHECK((message.find("SHOW HELP") != std::string::npos || message.find(syntax) != std::string::npos));
}

struct Spelling {
  const char* text;
  Verb verb;
};

const Spelling kVerbs[] = {
    {"SHOW HELP", Verb::ShowHelp},
    {"SHOW VERSION", Verb::ShowVersion},
    {"SHOW CONFIG", Verb::ShowConfig},
    {"SHOW DATABASES", Verb::ShowDatabases},
    {"SHOW POOLS", Verb::ShowPools},
    {"SHOW CLIENTS", Verb::ShowClients},
    {"SHOW SERVERS", Verb::ShowServers},
    {"SHOW STATS", Verb::ShowStats},
    {"SHOW STATS_TOTALS", Verb::ShowStatsTotals},
    {"SHOW LISTS", Verb::ShowLists},
    {"SHOW USERS", Verb::ShowUsers},
    {"SHOW STATE", Verb::ShowState},
    {"SHOW SHARDS", Verb::ShowShards},
    {"SHOW BUCKETS", Verb::ShowBuckets},
    {"SHOW DIRECTORY", Verb::ShowDirectory},
    {"SHOW ROUTERS", Verb::ShowRouters},
    {"SHOW SEQUENCES", Verb::ShowSequences},
    {"SHOW TRANSACTIONS", Verb::ShowTransactions},
    {"SHOW MIGRATIONS", Verb::ShowMigrations},
    {"SHOW REBALANCE", Verb::ShowRebalance},
    {"PAUSE", Verb::Pause},
    {"RESUME", Verb::Resume},
    {"RELOAD", Verb::Reload},
    {"RECONNECT", Verb::Reconnect},
    {"SHUTDOWN", Verb::Shutdown},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "Show Pools": first letter of each word upper, the rest lower.
std::string mixed(std::string s) {
  bool start = true;
  for (char& c : s) {
    c = static_cast<char>(start ? std::toupper(static_cast<unsigned char>(c))
                                : std::tolower(static_cast<unsigned char>(c)));
    start = c == ' ';
  }
  return s;
}

// Every concrete command a help line stands for: "<x>" and "[x]" are filled in, "[A|B]" also
// expands to each alternative.
std::vector<std::string> expand(std::string_view syntax) {
  std::vector<std::string> out{""};
  size_t i = 0;
  while (i < syntax.size()) {
    char open = syntax[i];
    if (open != '<' && open != '[') {
      for (auto& s : out) s.push_back(open);
      ++i;
      continue;
    }
    size_t close = syntax.find(open == '<' ? '>' : ']', i);
    REQUIRE(close != std::string_view::npos);
    std::string inner(syntax.substr(i + 1, close - i - 1));
    std::vector<std::string> choices;
    if (inner == "sql")
      choices = {"SELECT * FROM orders WHERE tenant_id = 7"};
    else if (inner == "id" || inner == "n")
      choices = {"42"};
    else if (inner == "shard")
      choices = {"s1"};
    else if (inner == "shards")
      choices = {"s1", "s0, s2"};
    else if (inner == "list or ranges")
      choices = {"1,5,10-20"};
    else {
      for (size_t start = 0;;) {
        size_t bar = inner.find('|', start);
        for (auto& part : expand(inner.substr(start, bar - start))) choices.push_back(part);
        if (bar == std::string::npos) break;
        start = bar + 1;
      }
    }
    if (open == '[') choices.push_back("");
    std::vector<std::string> next;
    for (const auto& s : out) {
      for (const auto& c : choices) next.push_back(s + c);
    }
    out = std::move(next);
    i = close + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("every verb parses in any case, with surrounding whitespace and trailing semicolons") {
  for (const auto& spelling : kVerbs) {
    const std::string text = spelling.text;
    for (const std::string& variant :
         {text, lower(text), mixed(text), std::string("  ").append(text) + "  ",
          std::string("\t\n").append(lower(text)) + "\r\n", text + ";", text + " ; ", text + ";;",
          std::string(" ").append(mixed(text)) + " ;\n;  "}) {
      CAPTURE(variant);
      Command command = parse_ok(variant);
      CHECK(command.verb == spelling.verb);
      CHECK(command.argument.empty());
      CHECK(command.client_id == 0);
      CHECK(command.shutdown == ShutdownMode::Immediate);
    }
  }
  // Words may be separated by any run of whitespace.
  CHECK(parse_ok("SHOW\t \n POOLS").verb == Verb::ShowPools);
}

TEST_CASE("SHOW ROUTE keeps the statement verbatim") {
  Command command = parse_ok("show route  SELECT *\n  FROM \"Orders\"  WHERE tenant_id = 'A  b' ");
  CHECK(command.verb == Verb::ShowRoute);
  CHECK(command.argument == "SELECT *\n  FROM \"Orders\"  WHERE tenant_id = 'A  b'");

  // A statement may hold semicolons of its own; only trailing ones go.
  Command two = parse_ok("SHOW ROUTE select 1; select 2;");
  CHECK(two.verb == Verb::ShowRoute);
  CHECK(two.argument == "select 1; select 2");
  CHECK(parse_ok("SHOW ROUTE SELECT ';'").argument == "SELECT ';'");
}

TEST_CASE("SHOW BUCKETS with and without a shard") {
  Command all = parse_ok("SHOW BUCKETS");
  CHECK(all.verb == Verb::ShowBuckets);
  CHECK(all.argument.empty());
  Command one = parse_ok("show buckets Shard_1;");
  CHECK(one.verb == Verb::ShowBuckets);
  CHECK(one.argument == "Shard_1");  // shard names keep their case
  expect_invalid("SHOW BUCKETS s0 s1", "SHOW BUCKETS");
}

TEST_CASE("KILL_CLIENT takes an id, with or without the c of SHOW CLIENTS' ptr") {
  Command plain = parse_ok("KILL_CLIENT 42");
  CHECK(plain.verb == Verb::KillClient);
  CHECK(plain.client_id == 42);
  CHECK(parse_ok("kill_client c42;").client_id == 42);
  CHECK(parse_ok("KILL_CLIENT C7").client_id == 7);
  CHECK(parse_ok("KILL_CLIENT 0").client_id == 0);
  CHECK(parse_ok("KILL_CLIENT 9999999999999999999").client_id == 9999999999999999999ull);
}

TEST_CASE("SHUTDOWN modes") {
  CHECK(parse_ok("SHUTDOWN").shutdown == ShutdownMode::Immediate);
  Command servers = parse_ok("shutdown wait_for_servers;");
  CHECK(servers.verb == Verb::Shutdown);
  CHECK(servers.shutdown == ShutdownMode::WaitForServers);
  CHECK(parse_ok("SHUTDOWN WAIT_FOR_CLIENTS").shutdown == ShutdownMode::WaitForClients);
  expect_invalid("SHUTDOWN NOW");
  expect_invalid("SHUTDOWN WAIT_FOR_CLIENTS NOW");
}

TEST_CASE("malformed commands are 08P01 and say what to type") {
  // unknown verbs
  for (const char* text :
       {"SELECT 1", "SHOW NOTHING", "SHOWPOOLS", "PAUSED", "KILL 1", "SHOW STATS_TOTAL", "LIST"})
    expect_invalid(text);
  // a verb without its object, or with an object it does not take
  expect_invalid("SHOW");
  expect_invalid("SHOW;");
  expect_invalid("SHOW POOLS extra");
  expect_invalid("SHOW HELP me");
  expect_invalid("PAUSE now");
  expect_invalid("RESUME all");
  expect_invalid("RELOAD config");
  expect_invalid("RECONNECT s0");
  expect_invalid("SHOW ROUTE", "SHOW ROUTE");
  expect_invalid("SHOW ROUTE ;", "SHOW ROUTE");
  // client ids
  expect_invalid("KILL_CLIENT", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT x", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT c", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT -1", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT 4x2", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT s42", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT 1 2", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT 18446744073709551616", "KILL_CLIENT");  // 2^64
  expect_invalid("KILL_CLIENT 99999999999999999999999999", "KILL_CLIENT");
  expect_invalid("KILL_CLIENT c" + std::string(20, '1'), "KILL_CLIENT");
  // more than one command
  expect_invalid("PAUSE; RESUME");
  expect_invalid("PAUSE;RESUME;");
  expect_invalid("KILL_CLIENT 1; SHUTDOWN");
  expect_invalid("SHOW POOLS; SHOW STATS");
  // nothing at all
  expect_invalid("");
  expect_invalid("   \t\r\n ");
  expect_invalid(";");
  expect_invalid(" ; ; ");
}

TEST_CASE("every SHOW HELP line is a command the parser accepts") {
  REQUIRE(kHelpCount > 0);
  size_t parsed = 0;
  for (size_t i = 0; i < kHelpCount; ++i) {
    CAPTURE(kHelp[i].syntax);
    CHECK_FALSE(kHelp[i].description.empty());
    for (const std::string& text : expand(kHelp[i].syntax)) {
      CAPTURE(text);
      auto command = parse_command(text);
      CHECK_MESSAGE(command.is_ok(), (command.is_ok() ? "" : command.status().message));
      ++parsed;
    }
  }
  CHECK(parsed >= kHelpCount);
  // The expansion covers the optional parts.
  CHECK(expand("SHUTDOWN [WAIT_FOR_SERVERS|WAIT_FOR_CLIENTS]") ==
        std::vector<std::string>{"SHUTDOWN WAIT_FOR_SERVERS", "SHUTDOWN WAIT_FOR_CLIENTS", "SHUTDOWN "});
}

TEST_CASE("SHOW HELP lists every verb") {
  std::vector<Verb> helped;
  for (size_t i = 0; i < kHelpCount; ++i) {
    for (const std::string& text : expand(kHelp[i].syntax)) {
      auto command = parse_command(text);
      if (command.is_ok()) helped.push_back(command->verb);
    }
  }
  auto has = [&](Verb v) { return std::find(helped.begin(), helped.end(), v) != helped.end(); };
  for (const auto& spelling : kVerbs) {
    CAPTURE(spelling.text);
    CHECK(has(spelling.verb));
  }
  CHECK(has(Verb::ShowRoute));
  CHECK(has(Verb::KillClient));
}

TEST_CASE("the mover's commands parse; malformed ones say their usage") {
  auto move = parse_command("move buckets 1, 5-9 ,12 to s3;");
  REQUIRE(move);
  CHECK(move->verb == Verb::MoveBuckets);
  CHECK(move->argument == "1, 5-9 ,12");
  CHECK(move->shard == "s3");
  auto rebalance = parse_command("REBALANCE TO s0,s1 s2 DRY RUN");
  REQUIRE(rebalance);
  CHECK(rebalance->verb == Verb::Rebalance);
  CHECK(rebalance->shards == std::vector<std::string>{"s0", "s1", "s2"});
  CHECK(rebalance->dry_run);
  CHECK_FALSE(rebalance->by_buckets);  // by data unless told
  auto by_buckets = parse_command("rebalance to s0, s1 by buckets dry run");
  REQUIRE(by_buckets);
  CHECK(by_buckets->by_buckets);
  CHECK(by_buckets->dry_run);
  CHECK(by_buckets->shards == std::vector<std::string>{"s0", "s1"});
  auto by_data = parse_command("REBALANCE BY DATA");
  REQUIRE(by_data);
  CHECK_FALSE(by_data->by_buckets);
  CHECK_FALSE(by_data->dry_run);
  CHECK(by_data->shards.empty());
  auto plain_buckets = parse_command("REBALANCE BY BUCKETS");
  REQUIRE(plain_buckets);
  CHECK(plain_buckets->by_buckets);
  CHECK(plain_buckets->shards.empty());
  auto plain = parse_command("REBALANCE");
  REQUIRE(plain);
  CHECK(plain->shards.empty());
  CHECK_FALSE(plain->dry_run);
  struct Numbered {
    const char* text;
    Verb verb;
  };
  for (const Numbered& n : {Numbered{"PAUSE MIGRATION 7", Verb::PauseMigration},
                            Numbered{"resume migration 7", Verb::ResumeMigration},
                            Numbered{"CANCEL MIGRATION 7", Verb::CancelMigration},
                            Numbered{"ROLLBACK MIGRATION 7", Verb::RollbackMigration},
                            Numbered{"EXPIRE ROLLBACK 7", Verb::ExpireRollback},
                            Numbered{"VERIFY BUCKET 7", Verb::VerifyBucket}}) {
    CAPTURE(n.text);
    auto parsed = parse_command(n.text);
    REQUIRE(parsed);
    CHECK(parsed->verb == n.verb);
    CHECK(parsed->number == 7);
  }
  auto reference = parse_command("verify reference app.plans");
  REQUIRE(reference);
  CHECK(reference->verb == Verb::VerifyReference);
  CHECK(reference->argument == "app.plans");
  CHECK(parse_command("SHOW MIGRATIONS")->verb == Verb::ShowMigrations);
  CHECK(parse_command("PAUSE")->verb == Verb::Pause);  // pgbouncer's PAUSE is unchanged
  for (const char* bad :
       {"MOVE BUCKETS 1,2", "MOVE BUCKETS TO s1", "MOVE 1 TO s1", "MOVE BUCKETS 1 TO s1 s2", "REBALANCE TO",
        "REBALANCE s1", "CANCEL MIGRATION", "CANCEL MIGRATION x", "ROLLBACK MIGRATION 1 2", "EXPIRE 3",
        "VERIFY BUCKET -1", "PAUSE MIGRATION", "VERIFY REFERENCE", "VERIFY REFERENCE plans countries"}) {
    CAPTURE(bad);
    auto parsed = parse_command(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.status().sqlstate == "08P01");
  }
}
