// Runs a program with a deadline for the integration tests: stdout and
// stderr to files, SIGKILL at the deadline so a test never hangs.
#pragma once

#include <string>
#include <vector>

namespace ufab::itest {

struct RunResult {
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that killed it (0: it exited)
};

// fork + exec with stdout/stderr redirected; returns the child's pid.
int spawn(const std::vector<std::string>& argv, const std::string& stdout_path, const std::string& stderr_path);
// Waits for pid, SIGKILLs it at the deadline.
RunResult wait_with_deadline(int pid, int deadline_s);

RunResult run_with_deadline(const std::vector<std::string>& argv, const std::string& stdout_path,
                            const std::string& stderr_path, int deadline_s);

std::string read_file(const std::string& path);
// What `cmd` (run by /bin/sh) prints on stdout.
std::string shell_output(const std::string& cmd);
// `cmd` run by /bin/sh: its status as std::system gives it (0: success).
int shell(const std::string& cmd);

}  // namespace ufab::itest
