// The gid of PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED: only a plain literal.
#include "parser/transaction_gid.h"

#include <doctest/doctest.h>

using sw::parser::plain_transaction_gid;

TEST_CASE("a transaction identifier is read only from one plain string literal") {
  CHECK(plain_transaction_gid("PREPARE TRANSACTION 'app_1'") == "app_1");
  CHECK(plain_transaction_gid("commit prepared 'it''s' ;") == "it's");
  CHECK(plain_transaction_gid("/* c */ ROLLBACK PREPARED -- x\n 'g'") == "g");
  CHECK(plain_transaction_gid("COMMIT PREPARED 'shardwire_a_1_2'") == "shardwire_a_1_2");
  // Spellings whose value depends on escapes or settings: refused, never guessed.
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED E'shardwire\\x5fa_1_2'"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED U&'shardwire\\005fa'"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED $$shardwire_a$$"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED 'shard\\x77ire_a'"));  // standard_conforming_strings off
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED 'shard' 'wire_a'"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED 'a' || 'b'"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED"));
  CHECK_FALSE(plain_transaction_gid("COMMIT PREPARED /* ' */ 'g'"));  // a quote elsewhere: refused
}
