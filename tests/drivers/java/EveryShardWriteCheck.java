// pgjdbc through shardwire (tests/integration/every_shard_write_test.cc): CopyManager.copyIn into
// the sharded `orders` and a PreparedStatement INSERT into the reference table `plans` in one
// transaction, committed, then the same rolled back; the rows read back key by key.
// Usage: java -cp postgresql.jar:DIR EveryShardWriteCheck URL ID TENANTS TAG
// Prints key=value lines; a wrong value exits 1 with "FAIL key: got ... want ..." on stderr.
import java.io.StringReader;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public final class EveryShardWriteCheck extends JdbcChecks {
  public static void main(String[] args) throws Exception {
    URI uri = new URI(args[0]);
    int plan = Integer.parseInt(args[1]);
    String[] tenants = args[2].split(",");
    String tag = args[3];
    String[] user = user(uri);
    String jdbc = jdbcUrl(uri, "");
    try (Connection conn = DriverManager.getConnection(jdbc, user[0], user[1])) {
      conn.setAutoCommit(false);
      CopyManager copy = ((PGConnection) conn).getCopyAPI();
      for (boolean commit : new boolean[] {true, false}) {
        String note = tag + (commit ? "-c" : "-r");
        StringBuilder rows = new StringBuilder();
        for (String t : tenants) rows.append(t).append('\t').append(note).append('\n');
        long copied = copy.copyIn("COPY orders (tenant_id, note) FROM STDIN", new StringReader(rows.toString()));
        put("copy_" + note, copied, tenants.length);
        try (PreparedStatement insert = conn.prepareStatement("INSERT INTO plans VALUES (?, ?)")) {
          insert.setInt(1, plan + (commit ? 0 : 1));
          insert.setString(2, note);
          put("insert_" + note, insert.executeUpdate(), 1);
        }
        if (commit) conn.commit(); else conn.rollback();
        long seen = 0;
        try (PreparedStatement count =
                 conn.prepareStatement("SELECT count(*) FROM orders WHERE tenant_id = ? AND note = ?")) {
          for (String t : tenants) {
            count.setLong(1, Long.parseLong(t));
            count.setString(2, note);
            try (ResultSet r = count.executeQuery()) {
              r.next();
              seen += r.getLong(1);
            }
          }
        }
        conn.commit();
        put("seen_" + note, seen, commit ? tenants.length : 0);
      }
    }
    System.out.println("done");
  }
}
