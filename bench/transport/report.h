// The tables bench_transport prints. Scripts and docs/results/ read them:
// keep their rows, columns and the last lines' "name: value" form.
#ifndef PST_BENCH_TRANSPORT_REPORT_H_
#define PST_BENCH_TRANSPORT_REPORT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "bench/transport/conversion_speed.h"
#include "bench/transport/pull_push_rounds.h"
#include "bench/transport/training_comparison.h"

namespace pst {

// "4 KiB", "1 MiB", "100 B".
std::string SizeLabel(size_t bytes);

// Framework bytes/s over bare ZeroMQ bytes/s, medians of the repeats.
double FrameworkOverBare(const PullPushResult& result);

// The transport table, the bfloat16 table with the conversion speed below
// it, then the latency and per-repeat MB/s tables.
void PrintPullPushTables(const std::vector<PullPushResult>& results,
                         const ConversionSpeed& conversion, int repeats);

// The training table and cluster_vs_local_examples_ratio.
void PrintTrainingTable(const TrainingOptions& options, const TrainingResult& result);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_REPORT_H_
