#include "chief/export/model_exporter.h"

#include <glog/logging.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "job/export_files.h"
#include "job/model_file.h"
#include "ps/ps_failure.h"

namespace pst {

namespace fs = std::filesystem;

ModelExporter::ModelExporter(const ChiefOptions& options, ClusterEvaluator* evaluator,
                             ShardAdmin* admin, const MonotonicClock& clock)
    : options_(options),
      evaluator_(evaluator),
      admin_(admin),
      clock_(clock),
      schedule_(std::chrono::seconds(options.export_every_secs), options.export_base_every) {}

Status ModelExporter::ExportIfDue(int64_t step, bool final) {
  const auto now = clock_.Now();
  const ExportKind kind = schedule_.Due(now, step, final);
  if (kind == ExportKind::kNone) return Status::OK();
  const Status written = kind == ExportKind::kBase ? WriteBase(step) : WriteDelta(step);
  if (IsPsFailure(written)) {
    schedule_.NeedBase();  // a cut may have taken rows no file holds
    return written;
  }
  if (!written.ok()) {
    LOG(ERROR) << "export at step " << step << " failed: " << written.ToString()
               << "; the next export is a base";
    schedule_.NeedBase();
    return Status::OK();
  }
  schedule_.Wrote(kind, now, step);
  if (kind == ExportKind::kBase) RemoveOldExports();
  return Status::OK();
}

void ModelExporter::RolledBack(int64_t step) {
  schedule_.NeedBase();
  StatusOr<ExportFiles> files = ListExports(options_.export_dir);
  if (!files.ok()) return;  // the next base's write will say what is wrong
  std::error_code error;
  for (const auto* kind : {&files->bases, &files->deltas}) {
    for (auto it = kind->upper_bound(step); it != kind->end(); ++it) fs::remove(it->second, error);
  }
}

Status ModelExporter::WriteBase(int64_t step) {
  fs::create_directories(options_.export_dir);
  // The count of changed rows restarts first: a row written while the
  // tables are pulled is in the base or the next delta, or both.
  PST_RETURN_IF_ERROR(
      admin_
          ->CutChangedRows(/*with_values=*/false,
                           SteadyClock().Now() + std::chrono::milliseconds(options_.rpc_timeout_ms))
          .status());
  PST_ASSIGN_OR_RETURN(std::vector<Tensor> params, evaluator_->PullVariables());
  DynamicTables dynamic;
  if (evaluator_->job().click_model) {
    PST_ASSIGN_OR_RETURN(std::vector<Tensor> tables, evaluator_->PullWholeTables(&dynamic));
    params.insert(params.end(), std::make_move_iterator(tables.begin()),
                  std::make_move_iterator(tables.end()));
  }
  const std::string path = options_.export_dir + "/" + BaseFileName(step);
  PST_RETURN_IF_ERROR(
      WriteModelFile(path, evaluator_->job(), evaluator_->model(), params, dynamic));
  LOG(INFO) << "exported a base at step " << step << ": " << path;
  return Status::OK();
}

Status ModelExporter::WriteDelta(int64_t step) {
  PST_ASSIGN_OR_RETURN(std::vector<CutRows> cut,
                       admin_->CutChangedRows(/*with_values=*/true,
                                              SteadyClock().Now() + std::chrono::milliseconds(
                                                                        options_.rpc_timeout_ms)));
  PST_ASSIGN_OR_RETURN(std::vector<Tensor> values, evaluator_->PullVariables());
  NamedTensors variables;
  const std::vector<VariableSpec>& specs = evaluator_->model().variables();
  for (size_t i = 0; i < specs.size(); ++i) variables.emplace_back(specs[i].name, values[i]);
  std::vector<ChangedTableRows> tables;
  int64_t rows = 0;
  for (CutRows& c : cut) {
    rows += c.ids.num_elements();
    tables.push_back(
        {std::move(c.table), std::move(c.ids), std::move(c.rows), std::move(c.removed)});
  }
  const std::string path = options_.export_dir + "/" + DeltaFileName(step);
  PST_RETURN_IF_ERROR(
      WriteDeltaFile(path, schedule_.base_step(), schedule_.last_step(), variables, tables));
  LOG(INFO) << "exported a delta at step " << step << ": " << rows << " rows changed since step "
            << schedule_.last_step() << ", " << path;
  return Status::OK();
}

void ModelExporter::RemoveOldExports() {
  StatusOr<ExportFiles> files = ListExports(options_.export_dir);
  if (!files.ok()) return;
  const std::map<int64_t, std::string>& bases = files->bases;
  std::error_code error;
  if (static_cast<int>(bases.size()) <= options_.keep_export_bases) return;
  auto oldest_kept = bases.end();
  std::advance(oldest_kept, -options_.keep_export_bases);
  for (auto it = bases.begin(); it != oldest_kept; ++it) fs::remove(it->second, error);
  for (const auto& [step, path] : files->deltas) {
    if (step < oldest_kept->first) fs::remove(path, error);
  }
}

}  // namespace pst
