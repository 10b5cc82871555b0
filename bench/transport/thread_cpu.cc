#include "bench/transport/thread_cpu.h"

#include <filesystem>
#include <fstream>

namespace pst {

ThreadCpu SampleThreadCpu() {
  ThreadCpu cpu;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream comm(task.path() / "comm"), schedstat(task.path() / "schedstat");
    std::string name;
    double on_cpu_ns = 0;
    if (std::getline(comm, name) && schedstat >> on_cpu_ns) cpu[name] += on_cpu_ns * 1e-9;
  }
  return cpu;
}

void AddThreadCpu(const ThreadCpu& later, const ThreadCpu& earlier, ThreadCpu* total) {
  for (const auto& [name, seconds] : later) {
    const auto before = earlier.find(name);
    (*total)[name] += seconds - (before == earlier.end() ? 0 : before->second);
  }
}

}  // namespace pst
