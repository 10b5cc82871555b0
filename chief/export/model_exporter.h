// ModelExporter: the chief's side of the incremental export
// (--export_every_secs, job/export_files.h). When its ExportSchedule says,
// it writes into --export_dir either a base (the model whole, as model.bin
// holds it: the dense variables and every fixed table pulled in chunks) or
// a delta (the dense variables and the rows each ps cut: those written
// since the previous export, never the whole tables), and keeps the newest
// --keep_export_bases bases with their deltas.
//
// Consistency in async mode: training goes on while a delta is cut. Each
// row is as its shard held it at its cut and each dense variable as it was
// when pulled, so a delta is not one global step's model; a row written
// after its cut is in the next delta. Base and deltas applied in order give
// every row its value at its latest cut.
//
// Ownership: borrows the evaluator (dense pulls, whole tables) and the
// admin (cuts), which must outlive it. Thread safety: none; the timeline's
// thread.
#ifndef PST_CHIEF_EXPORT_MODEL_EXPORTER_H_
#define PST_CHIEF_EXPORT_MODEL_EXPORTER_H_

#include <cstdint>
#include <string>

#include "chief/chief_options.h"
#include "chief/reporting/cluster_evaluator.h"
#include "common/clock.h"
#include "common/status.h"
#include "ps/shard_admin.h"
#include "scheduler/export_schedule.h"

namespace pst {

class ModelExporter {
 public:
  ModelExporter(const ChiefOptions& options, ClusterEvaluator* evaluator, ShardAdmin* admin,
                const MonotonicClock& clock);

  // At a look at global step `step`: writes an export when due (`final`:
  // the run ends, write what changed now). A ps failure is returned (the
  // timeline recovers the cluster); a write that fails is logged, and the
  // next export is a base.
  Status ExportIfDue(int64_t step, bool final = false);
  // The cluster went back to a checkpoint of step `step`: exports after it
  // are of a history that is gone, and are removed; the next is a base.
  void RolledBack(int64_t step);

 private:
  Status WriteBase(int64_t step);
  Status WriteDelta(int64_t step);
  // Removes bases beyond the newest keep_export_bases, and deltas older
  // than the oldest base kept.
  void RemoveOldExports();

  const ChiefOptions& options_;
  ClusterEvaluator* const evaluator_;
  ShardAdmin* const admin_;
  const MonotonicClock& clock_;
  ExportSchedule schedule_;
};

}  // namespace pst

#endif  // PST_CHIEF_EXPORT_MODEL_EXPORTER_H_
