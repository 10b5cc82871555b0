// CPU time of this process's threads, summed by thread name: where a
// benchmark's microseconds go when the worker and the ps share one process
// (bench_transport's trainers). Read from /proc/self/task/*/comm and
// schedstat (nanoseconds on a CPU), so ZeroMQ's own I/O threads count too.
#ifndef PST_BENCH_TRANSPORT_THREAD_CPU_H_
#define PST_BENCH_TRANSPORT_THREAD_CPU_H_

#include <map>
#include <string>

namespace pst {

// Thread name -> CPU seconds; empty where /proc has no schedstat.
using ThreadCpu = std::map<std::string, double>;

ThreadCpu SampleThreadCpu();
// *total += later - earlier, name by name (threads that ended meanwhile
// are left out).
void AddThreadCpu(const ThreadCpu& later, const ThreadCpu& earlier, ThreadCpu* total);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_THREAD_CPU_H_
