#include "harness/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace it {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// Builds a NULL-terminated environment: the current one with options applied.
std::vector<std::string> build_env(const CommandOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    bool drop = options.env.count(key) > 0;
    for (const auto& u : options.unset_env) drop = drop || u == key;
    if (!drop) env.push_back(entry);
  }
  for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child after fork: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, const char* cwd) {
  signal(SIGPIPE, SIG_DFL);  // the test process ignores SIGPIPE; children get the default back
  if (cwd && *cwd && chdir(cwd) != 0) _exit(126);
  // execvpe searches PATH from the environment we pass.
  execvpe(argv[0], argv, envp);
  _exit(127);
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string CommandResult::describe() const {
  std::string s = timed_out     ? "timed out"
                  : term_signal ? "killed by signal " + std::to_string(term_signal)
                                : "exit " + std::to_string(exit_code);
  s += "\n--- stdout (tail) ---\n" + tail_lines(out, 30);
  s += "\n--- stderr (tail) ---\n" + tail_lines(err, 30);
  return s;
}

bool running_as_root() { return geteuid() == 0; }

std::vector<std::string> as_postgres(std::vector<std::string> argv) {
  if (!running_as_root()) return argv;
  std::vector<std::string> out = {"runuser", "-u", "postgres", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

CommandResult run_command(const std::vector<std::string>& argv_in, const std::string& stdin_text,
                          std::chrono::milliseconds timeout, const CommandOptions& options) {
  if (argv_in.empty()) throw std::invalid_argument("run_command: empty argv");
  std::vector<std::string> argv_s = argv_in;
  std::vector<std::string> env_s = build_env(options);
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(errno_text("pipe2"));

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(errno_text("fork"));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    exec_child(argv.data(), envp.data(), options.cwd.c_str());
  }
  setpgid(pid, pid);  // also from the parent, to avoid the race with kill(-pid)
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  int in_fd = in_pipe[1], out_fd = out_pipe[0], err_fd = err_pipe[0];
  fcntl(in_fd, F_SETFL, O_NONBLOCK);
  if (stdin_text.empty()) {
    close(in_fd);
    in_fd = -1;
  }

  CommandResult result;
  size_t written = 0;
  auto deadline = Clock::now() + timeout;
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int idx_in = -1, idx_out = -1, idx_err = -1;
    if (in_fd >= 0) {
      idx_in = n;
      fds[n++] = {in_fd, POLLOUT, 0};
    }
    if (out_fd >= 0) {
      idx_out = n;
      fds[n++] = {out_fd, POLLIN, 0};
    }
    if (err_fd >= 0) {
      idx_err = n;
      fds[n++] = {err_fd, POLLIN, 0};
    }
    int r = poll(fds, n, static_cast<int>(std::min<long long>(left, 200)));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(errno_text("poll"));
    }
    if (idx_in >= 0 && fds[idx_in].revents) {
      ssize_t w = write(in_fd, stdin_text.data() + written, stdin_text.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) written = stdin_text.size();  // EPIPE: child gone
      if (written >= stdin_text.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
    auto drain = [&](int idx, int& fd, std::string& sink) {
      if (idx < 0 || !fds[idx].revents) return;
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) {
        sink.append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        fd = -1;
      }
    };
    drain(idx_out, out_fd, result.out);
    drain(idx_err, err_fd, result.err);
  }
  if (in_fd >= 0) close(in_fd);
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0) close(err_fd);

  int status = 0;
  if (result.timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return result;
  }
  // Outputs closed; the child should be exiting. Still bound the wait.
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::runtime_error(errno_text("waitpid"));
    if (Clock::now() > deadline) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return result;
    }
    std::this_thread::sleep_for(5ms);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

Background::Background(const std::vector<std::string>& argv_in, const std::string& log_file,
                       const CommandOptions& options) {
  std::vector<std::string> argv_s = argv_in;
  std::vector<std::string> env_s = build_env(options);
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);
  int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error(errno_text("open " + log_file));
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(errno_text("fork"));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    setpgid(0, 0);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    exec_child(argv.data(), envp.data(), options.cwd.c_str());
  }
  close(log_fd);
  close(null_fd);
  pid_ = pid;
}

Background::~Background() { kill_and_wait(); }

Background::Background(Background&& other) noexcept : pid_(other.pid_), status_(other.status_) {
  other.pid_ = -1;
}

Background& Background::operator=(Background&& other) noexcept {
  if (this != &other) {
    kill_and_wait();
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

bool Background::running() {
  if (pid_ < 0 || status_) return false;
  int status = 0;
  pid_t w = waitpid(pid_, &status, WNOHANG);
  if (w == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

bool Background::signal(int sig) {
  if (!running()) return false;
  return ::kill(pid_, sig) == 0;
}

std::optional<int> Background::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
  return status_;
}

void Background::kill_and_wait() {
  if (pid_ < 0 || status_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) == pid_) status_ = status;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  // Write to a temp file and rename, so a process reading it never sees half a file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << content;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error(errno_text("rename " + tmp));
}

std::string tail_lines(const std::string& text, size_t lines) {
  if (text.empty()) return text;
  size_t pos = text.size();
  if (text.back() == '\n') --pos;
  size_t count = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++count == lines) break;
    --pos;
  }
  return text.substr(pos);
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error(errno_text("mkdtemp " + tmpl));
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (std::getenv("SHARDWIRE_IT_KEEP")) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(errno_text("socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error(errno_text("bind"));
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool port_accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

std::string pg_bindir() {
  if (const char* d = std::getenv("PG_BINDIR"); d && *d) return d;
  return "/usr/lib/postgresql/15/bin";
}

std::string pg_bin(const std::string& tool) { return pg_bindir() + "/" + tool; }

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
}

}  // namespace it
