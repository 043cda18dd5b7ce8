// pgjdbc through shardwire: typed parameters, a statement reused (server-prepared from its
// prepareThreshold-th use; 0 never names one), a transaction, executeBatch, an error, a cursor
// (fetch size in a transaction: portal suspended and resumed), CopyManager both ways, keyless reads
// merged across shards with autocommit off (inside the transaction block).
// Usage: java -cp postgresql.jar:DIR JdbcCheck URL MODE TENANT TAG PREPARE_THRESHOLD
// where URL is postgresql://user:password@host:port/db?sslmode=disable.
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public final class JdbcCheck extends JdbcChecks {
  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: JdbcCheck URL MODE TENANT TAG PREPARE_THRESHOLD");
      System.exit(2);
    }
    URI uri = new URI(args[0]);
    String mode = args[1];
    long tenant = Long.parseLong(args[2]);
    String tag = args[3];
    String[] user = user(uri);
    String jdbc = jdbcUrl(uri, "connectTimeout=10&socketTimeout=60&prepareThreshold=" + args[4]);
    try (Connection conn = DriverManager.getConnection(jdbc, user[0], user[1])) {
      run(conn, mode, tenant, tag);
    }
    System.out.println("done");
  }

  static void run(Connection conn, String mode, long tenant, String tag) throws Exception {
    put("connect", "ok", "ok");
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
      rs.next();
      put("select1", rs.getInt(1), 1);
    }

    try (PreparedStatement ps = conn.prepareStatement(
             "SELECT ?::int, ?::text, ?::numeric, ?::timestamptz, ?::bytea, ?::text")) {
      ps.setInt(1, 42);
      ps.setString(2, "h\u00e9llo");
      ps.setBigDecimal(3, new BigDecimal("12.50"));
      ps.setObject(4, OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC));
      ps.setBytes(5, new byte[] {0, (byte) 0xff});
      ps.setNull(6, Types.VARCHAR);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        String got = rs.getInt(1) + "|" + rs.getString(2) + "|" + rs.getBigDecimal(3).toPlainString() + "|"
            + rs.getObject(4, OffsetDateTime.class).toEpochSecond() + "|"
            + HexFormat.of().formatHex(rs.getBytes(5)) + "|" + (rs.getString(6) == null ? "null" : rs.getString(6));
        put("params", got, "42|h\u00e9llo|12.50|1704164645|00ff|null");
      }
    }

    try (PreparedStatement ps = conn.prepareStatement("SELECT ?::int * 2")) {
      long total = 0;
      for (int i = 1; i <= 7; ++i) {
        ps.setInt(1, i);
        total += one(ps);
      }
      put("prepared", total, 56);
    }

    String insert = "INSERT INTO orders (tenant_id, note, qty) VALUES (?, ?, ?)";
    conn.setAutoCommit(false);
    try (PreparedStatement ps = conn.prepareStatement(insert)) {
      int[] qtys = {1, 2, 3};
      for (int i = 0; i < qtys.length; ++i) {
        ps.setLong(1, tenant);
        ps.setString(2, tag + "-txn-" + i);
        ps.setInt(3, qtys[i]);
        ps.executeUpdate();
      }
    }
    conn.commit();
    put("txn", 3, 3);

    try (PreparedStatement ps = conn.prepareStatement(insert)) {
      for (int i = 0; i < 5; ++i) {
        ps.setLong(1, tenant);
        ps.setString(2, tag + "-batch-" + i);
        ps.setInt(3, 10 + i);
        ps.addBatch();
      }
      int n = 0;
      for (int c : ps.executeBatch()) n += c;
      conn.commit();
      put("batch", n, 5);
    }
    try (PreparedStatement ps = conn.prepareStatement(insert)) {
      ps.setLong(1, tenant);
      ps.setString(2, tag + "-rollback");
      ps.setInt(3, 100);
      ps.executeUpdate();
      conn.rollback();
    }
    try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM orders WHERE tenant_id = ? AND note = ?")) {
      ps.setLong(1, tenant);
      ps.setString(2, tag + "-rollback");
      put("rollback", one(ps), 0);
      conn.commit();
    }
    conn.setAutoCommit(true);

    try (PreparedStatement ps = conn.prepareStatement(
             "SELECT count(*) FROM orders WHERE tenant_id = ? AND note LIKE ?")) {
      List<String> counts = new ArrayList<>();
      for (int i = 0; i < 6; ++i) {
        ps.setLong(1, tenant);
        ps.setString(2, tag + "-%");
        counts.add(Long.toString(one(ps)));
      }
      put("keyed", String.join(",", counts), "8,8,8,8,8,8");
    }

    try (Statement st = conn.createStatement()) {
      st.executeQuery("SELECT * FROM no_such_table_for_drivers");
      put("error", "none", "42P01");
    } catch (SQLException e) {
      put("error", e.getSQLState(), "42P01");
    }
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
      rs.next();
      put("after_error", rs.getInt(1), 1);
    }

    conn.setAutoCommit(false);
    try (PreparedStatement ps = conn.prepareStatement(
             "SELECT qty FROM orders WHERE tenant_id = ? AND note LIKE ? ORDER BY qty")) {
      ps.setFetchSize(2);
      ps.setLong(1, tenant);
      ps.setString(2, tag + "-%");
      long sum = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) sum += rs.getInt(1);
      }
      conn.commit();
      put("cursor", sum, 66);
    }
    conn.setAutoCommit(true);

    String table = "copy_" + tag;
    try (Statement st = conn.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
      st.execute("CREATE TABLE " + table + " (id int, note text)");
    }
    CopyManager copy = conn.unwrap(PGConnection.class).getCopyAPI();
    put("copy_in", copy.copyIn("COPY " + table + " (id, note) FROM STDIN", new StringReader("1\ta\n2\tb\n3\tc\n")), 3);
    StringWriter out = new StringWriter();
    copy.copyOut("COPY (SELECT id, note FROM " + table + " ORDER BY id) TO STDOUT", out);
    put("copy_out", String.join(",", out.toString().strip().replace('\t', '|').split("\n")), "1|a,2|b,3|c");

    conn.setAutoCommit(false);
    try (PreparedStatement counted = conn.prepareStatement("SELECT count(*) FROM orders WHERE note LIKE ?");
         PreparedStatement top = conn.prepareStatement(
             "SELECT note, qty FROM orders WHERE note LIKE ? ORDER BY qty DESC LIMIT 1")) {
      counted.setString(1, tag + "-%");
      long count = one(counted);
      top.setString(1, tag + "-%");
      String first;
      try (ResultSet rs = top.executeQuery()) {
        rs.next();
        first = rs.getString(1).substring(tag.length()) + "|" + rs.getInt(2);
      }
      conn.commit();
      put("txn_merged", count + "|" + first, "8|-batch-4|14");
    }
    // A fetch size inside the transaction: a named portal, Execute(3) + Sync at a time; the merge
    // of every shard goes on across the fetches.
    try (PreparedStatement paged =
             conn.prepareStatement("SELECT qty FROM orders WHERE note LIKE ? ORDER BY qty DESC")) {
      paged.setFetchSize(3);
      paged.setString(1, tag + "-%");
      List<String> qtys = new ArrayList<>();
      try (ResultSet rs = paged.executeQuery()) {
        while (rs.next()) qtys.add(Integer.toString(rs.getInt(1)));
      }
      conn.commit();
      put("txn_paged", String.join(",", qtys), "14,13,12,11,10,3,2,1");
    }
    conn.setAutoCommit(true);

    if (mode.equals("session")) {
      Set<Integer> pids = new HashSet<>();
      try (Statement st = conn.createStatement()) {
        for (int i = 0; i < 3; ++i) {
          try (ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            pids.add(rs.getInt(1));
          }
        }
      }
      put("session_pid", pids.size() == 1 ? "stable" : "changed", "stable");
    }
  }
}
