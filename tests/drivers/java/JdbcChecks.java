// What the pgjdbc checks share (each check extends it): key=value lines on stdout, a wrong value
// exits 1 with "FAIL key: got ... want ..." on stderr; a one-value query; the JDBC URL and user
// of a postgresql://user:password@host:port/db URI.
import java.net.URI;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

abstract class JdbcChecks {
  static void put(String key, Object got, Object want) {
    if (!String.valueOf(got).equals(String.valueOf(want))) {
      System.err.println("FAIL " + key + ": got " + got + " want " + want);
      System.exit(1);
    }
    System.out.println(key + "=" + got);
    System.out.flush();
  }

  static long one(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) throw new SQLException("no row");
      return rs.getLong(1);
    }
  }

  // jdbc:postgresql://host:port/db?sslmode=disable plus `options` ("a=1&b=2", or empty).
  static String jdbcUrl(URI uri, String options) {
    return "jdbc:postgresql://" + uri.getHost() + ":" + uri.getPort() + uri.getPath() + "?sslmode=disable"
        + (options.isEmpty() ? "" : "&" + options);
  }

  // {user, password}
  static String[] user(URI uri) {
    return uri.getUserInfo().split(":", 2);
  }
}
