// A PREPARE TRANSACTION sent in the extended protocol, recognised before it runs. Pure: no I/O.
// Inside a transaction block the proxy refuses it and rolls the transaction back, as PostgreSQL
// does when a PREPARE TRANSACTION fails (docs/architecture.md §5.7); the batch that carries it
// then runs as its Query form, whose answer (the error, then ReadyForQuery) is what the client
// is owed for the batch too: the error comes before any other answer of the batch.
#pragma once

#include <cstddef>
#include <string_view>

#include "wire/frame_reader.h"

namespace sw::session {

struct PrepareTransactionBatch {
  enum class Kind {
    Other,     // not such a batch (or not of the shape below): it runs as sent
    NeedMore,  // its first message says PREPARE TRANSACTION; the rest is still coming
    Found,
  };
  Kind kind = Kind::Other;
  size_t size = 0;        // Found: the batch's bytes, through its Sync
  std::string_view text;  // Found: the Parse's statement text, as the client sent it
};

// The batch at the front of `input`: Parse of a statement whose first words are PREPARE
// TRANSACTION, [Describe of that statement], Bind of it, [Describe portal], Execute, Sync. The
// caller confirms that the text is that one statement alone (the parser's facts).
PrepareTransactionBatch find_prepare_transaction_batch(std::string_view input, const wire::Limits& limits);

}  // namespace sw::session
