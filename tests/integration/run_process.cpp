#include "tests/integration/run_process.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ufab::itest {

int spawn(const std::vector<std::string>& argv, const std::string& stdout_path, const std::string& stderr_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) _exit(126);
    dup2(out, 1);
    dup2(err, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

RunResult wait_with_deadline(int pid, int deadline_s) {
  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

RunResult run_with_deadline(const std::vector<std::string>& argv, const std::string& stdout_path,
                            const std::string& stderr_path, int deadline_s) {
  return wait_with_deadline(spawn(argv, stdout_path, stderr_path), deadline_s);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string shell_output(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (const size_t n = fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
    pclose(f);
  }
  return out;
}

int shell(const std::string& cmd) { return std::system(cmd.c_str()); }

}  // namespace ufab::itest
