#include "cli/help.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "cli/flags.h"
#include "common/parse_number.h"

namespace pst {
namespace {

constexpr size_t kLineWidth = 80;
constexpr std::string_view kDescriptionIndent = "      ";  // under "  --name"

// The tasks that read a group's flags, as a bit set.
// kAll: the three tasks; predict reads only the groups that name it.
constexpr unsigned kPs = 1, kWorker = 2, kChief = 4, kAll = kPs | kWorker | kChief, kPredict = 8;

struct FlagGroup {
  const char* title;
  unsigned roles;
  std::vector<std::string> flags;  // in the order shown
};

// The help table: groups in the order shown (for a task, the groups it reads
// come first, in this order). Each flag of cli/flags.cc in exactly one group.
const std::vector<FlagGroup>& Groups() {
  static const auto* groups = new std::vector<FlagGroup>{
      {"Cluster",
       kAll,
       {"ps_hosts", "worker_hosts", "chief_host", "bind_host", "task_index", "cluster_id",
        "ps_wait_timeout_ms", "join_timeout_ms"}},
      {"Prediction", kPredict, {"model_file", "output", "ensemble"}},
      {"Export", kChief | kPredict, {"export_onnx"}},
      {"Incremental export",
       kChief | kPredict,
       {"export_every_secs", "export_dir", "export_base_every", "keep_export_bases",
        "export_step"}},
      {"Streaming (click models)", kChief | kWorker, {"follow", "train_files"}},
      {"Data",
       kChief | kWorker | kPredict,
       {"dataset", "data_dir", "train_file", "test_file", "label_column", "num_classes",
        "input_shape", "label_bytes", "record_dtype", "normalize", "validation_examples",
        "augment"}},
      {"Training",
       kChief | kWorker,
       {"model", "model_spec", "train_steps", "batch_size", "optimizer", "learning_rate",
        "momentum", "l1", "l2", "seed", "warmup_steps"}},
      {"Schedules and regularization",
       kChief | kWorker,
       {"lr_schedule", "lr_decay_steps", "lr_decay_rate", "lr_min", "lr_warmup_steps",
        "lr_plateau_patience", "lr_plateau_min_delta", "lr_plateau_cooldown", "weight_decay",
        "clip_norm"}},
      {"Embedding tables (click models)",
       kChief | kWorker | kPredict,
       {"features", "criteo_integer_fields", "embedding_rows", "embedding_capacity",
        "embedding_min_count", "embedding_l2"}},
      {"Embedding tables on disk", kChief | kPs, {"embedding_storage", "embedding_cache_rows"}},
      {"Sync and staleness",
       kChief | kWorker,
       {"mode", "replicas_to_aggregate", "staleness_bound", "staleness_policy", "max_staleness",
        "overlap", "push_bucket_bytes"}},
      {"Checkpoints",
       kChief | kPs,
       {"checkpoint_dir", "checkpoint_every_steps", "checkpoint_every_secs", "keep_checkpoints",
        "max_checkpoint_failures"}},
      {"Evaluation and logs",
       kChief | kWorker,
       {"eval_every_steps", "early_stopping_patience", "log_every_steps", "progress_every_secs",
        "worker_log_every_steps", "run_dir", "logdir"}},
      {"Variable placement", kChief | kWorker, {"placement", "partition_bytes", "ps_replicas"}},
      {"Device", kWorker | kPredict, {"device"}},
      {"Model parallelism", kWorker, {"model_parallel", "micro_batches"}},
      {"Device options",
       kWorker,
       {"allow_soft_placement", "log_device_placement", "gpu_memory_fraction", "cpu_kernels",
        "intra_op_threads"}},
      {"Transport and failure detection",
       kAll,
       {"rpc_timeout_ms", "max_message_bytes", "wire_dtype", "ps_threads", "heartbeat_timeout_ms",
        "heartbeat_interval_ms", "stop_grace_ms", "shm"}},
      {"Shared ps clusters", kChief | kWorker, {"container", "reset_container"}},
      {"Monitoring", kChief | kPs, {"metrics_port"}},
      {"Security", kAll, {"curve_keys_dir"}},
      {"Testing", kWorker, {"simulated_delay_ms", "simulated_delay_from_step"}},
  };
  return *groups;
}

unsigned RoleBit(Program program) {
  switch (program) {
    case Program::kPs: return kPs;
    case Program::kWorker: return kWorker;
    case Program::kChief: return kChief;
    case Program::kPredict: return kPredict;
  }
  return kAll;
}

// `text` split into words and wrapped at kLineWidth, each line indented.
void AppendWrapped(const std::string& text, std::string* out) {
  std::istringstream words(text);
  std::string line;
  for (std::string word; words >> word;) {
    if (!line.empty() && kDescriptionIndent.size() + line.size() + 1 + word.size() > kLineWidth) {
      *out += std::string(kDescriptionIndent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) *out += std::string(kDescriptionIndent) + line + "\n";
}

// The default as one would type it: gflags keeps a double's with 17 digits
// ("0.90000000000000002").
std::string DefaultValue(const gflags::CommandLineFlagInfo& flag) {
  if (flag.type == "string") return "\"" + flag.default_value + "\"";
  if (flag.type == "double") {
    double value = 0;
    if (!ParseNumber(flag.default_value, &value)) return flag.default_value;
    std::ostringstream shortest;
    shortest << value;
    return shortest.str();
  }
  return flag.default_value;
}

// "  --name=default" and the description below it.
void AppendFlag(const gflags::CommandLineFlagInfo& flag, std::string* out) {
  *out += "  --" + flag.name + "=" + DefaultValue(flag) + "\n";
  AppendWrapped(flag.description, out);
}

void AppendGroup(const std::string& title, const std::vector<gflags::CommandLineFlagInfo>& flags,
                 std::string* out) {
  if (flags.empty()) return;
  *out += "\n" + title + ":\n";
  for (const auto& flag : flags) AppendFlag(flag, out);
}

std::map<std::string, gflags::CommandLineFlagInfo> ProjectFlagsByName() {
  std::map<std::string, gflags::CommandLineFlagInfo> by_name;
  for (auto& flag : ProjectFlags()) by_name.emplace(flag.name, std::move(flag));
  return by_name;
}

}  // namespace

const char* ProgramName(Program program) {
  switch (program) {
    case Program::kPs: return "ps";
    case Program::kWorker: return "worker";
    case Program::kChief: return "chief";
    case Program::kPredict: return "predict";
  }
  return "?";
}

std::string ProjectHelp(Program program, const std::string& usage) {
  const auto flags = ProjectFlagsByName();
  auto infos = [&flags](const std::vector<std::string>& names) {
    std::vector<gflags::CommandLineFlagInfo> out;
    for (const auto& name : names) {
      if (auto it = flags.find(name); it != flags.end()) out.push_back(it->second);
    }
    return out;
  };
  const unsigned bit = RoleBit(program);
  std::string out = "usage: " + usage + "\n";
  for (const auto& group : Groups()) {
    if (group.roles & bit) AppendGroup(group.title, infos(group.flags), &out);
  }
  AppendGroup("Other", infos(UngroupedProjectFlags()), &out);
  if (program != Program::kPredict) {
    out += std::string("\nRead by the other programs (") + ProgramName(program) +
           " accepts them too: one --flagfile serves all):\n";
    for (const auto& group : Groups()) {
      if (!(group.roles & bit)) AppendGroup(group.title, infos(group.flags), &out);
    }
  }
  out +=
      "\nFlags can also come from --flagfile=FILE (one --flag=value a line); TF_CONFIG\n"
      "fills in the cluster flags not given. --helpfull also lists glog's and gflags'\n"
      "flags; --version prints the version and the back ends compiled in.\n";
  return out;
}

std::string FullHelp(Program program, const std::string& usage) {
  std::string out = ProjectHelp(program, usage);
  const auto project = ProjectFlagsByName();
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  std::vector<gflags::CommandLineFlagInfo> others;
  for (const auto& flag : all) {
    if (project.count(flag.name) == 0) others.push_back(flag);
  }
  AppendGroup("glog and gflags", others, &out);
  return out;
}

std::vector<std::string> UngroupedProjectFlags() {
  std::set<std::string> grouped;
  for (const auto& group : Groups()) grouped.insert(group.flags.begin(), group.flags.end());
  std::vector<std::string> ungrouped;
  for (const auto& flag : ProjectFlags()) {
    if (grouped.count(flag.name) == 0) ungrouped.push_back(flag.name);
  }
  return ungrouped;
}

std::vector<std::string> UnknownFlagsInHelpTable() {
  const auto flags = ProjectFlagsByName();
  std::vector<std::string> unknown;
  for (const auto& group : Groups()) {
    for (const auto& name : group.flags) {
      if (flags.count(name) == 0) unknown.push_back(name);
    }
  }
  return unknown;
}

}  // namespace pst
