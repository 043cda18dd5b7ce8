// pgjdbc through shardwire: a statement server-prepared (prepareThreshold=1) that reads no table
// (the default shard), then autocommit off: pgjdbc sends BEGIN with the next read in the extended
// protocol, and ROLLBACK likewise (both server-prepared too once used). Each of three
// connections in turn, the transaction's rows read and rolled back; a keyed read in a
// transaction after it. Reported as: every client after the first got 26000 until a restart.
// Usage: java -cp postgresql.jar:DIR JdbcTxnCheck URL MODE TENANT TAG
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;

public final class JdbcTxnCheck extends JdbcChecks {
  // One client: the read in autocommit, then in three transactions rolled back. Its sum.
  static long client(String jdbc, String[] user, long tenant) throws SQLException {
    long sum = 0;
    try (Connection conn = DriverManager.getConnection(jdbc, user[0], user[1]);
         PreparedStatement read = conn.prepareStatement("SELECT ?::int + 1");
         PreparedStatement keyed = conn.prepareStatement("SELECT least(count(*), 0) + 2 FROM orders WHERE tenant_id = ?")) {
      read.setInt(1, 1);
      sum += one(read);
      sum += one(read);
      conn.setAutoCommit(false);
      for (int i = 0; i < 3; ++i) {
        sum += one(read);
        conn.rollback();
      }
      keyed.setLong(1, tenant);
      sum += one(keyed);
      conn.rollback();
      conn.setAutoCommit(true);
      sum += one(read);
    }
    return sum;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: JdbcTxnCheck URL MODE TENANT TAG");
      System.exit(2);
    }
    URI uri = new URI(args[0]);
    long tenant = Long.parseLong(args[2]);
    String[] user = user(uri);
    String jdbc = jdbcUrl(uri, "connectTimeout=10&socketTimeout=30&prepareThreshold=1");
    put("connect", "ok", "ok");
    StringBuilder sums = new StringBuilder();
    for (int client = 0; client < 3; ++client) {
      if (client > 0) sums.append(',');
      try {
        sums.append(client(jdbc, user, tenant));
      } catch (SQLException e) {
        sums.append(e.getSQLState());
      }
    }
    put("txn_rollbacks", sums, "14,14,14");
    System.out.println("done");
  }
}
