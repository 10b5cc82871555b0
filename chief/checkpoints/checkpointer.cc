#include "chief/checkpoints/checkpointer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "chief/checkpoints/reshard.h"
#include "common/atomic_file.h"
#include "common/create_folder.h"
#include "common/parse_number.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
constexpr char kPrefix[] = "ckpt-";
constexpr char kClusterIdFile[] = "cluster_id";
// Where a checkpoint of another ps count is cut for the running ps: a folder
// name the ps accept, outside the ckpt-<step> names every listing reads.
constexpr char kReshardFolder[] = "resharding";

// Checkpoint folders under `dir` with their steps, newest first.
std::vector<std::pair<int64_t, std::string>> CheckpointFolders(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind(kPrefix, 0) != 0) continue;
    int64_t step = 0;
    if (ParseNumber(std::string_view(name).substr(sizeof(kPrefix) - 1), &step) && step >= 0) {
      found.emplace_back(step, name);
    }
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

// OK when every part on disk matches the manifest; otherwise DataLoss
// naming the file.
Status VerifyParts(const std::string& folder, const CheckpointManifest& m) {
  for (size_t k = 0; k < m.parts.size(); ++k) {
    const std::string path = folder + "/" + PartFileName(k);
    auto digest = DigestFile(path);
    if (!digest.ok()) return DataLoss("missing part " + path);
    const bool crc_recorded = m.format_version >= 2;
    if (digest->bytes != m.parts[k].bytes || (crc_recorded && digest->crc32 != m.parts[k].crc32)) {
      return DataLoss("part " + path + " does not match its manifest (size or checksum)");
    }
  }
  return Status::OK();
}

// True when `manifest` was written under `running`'s model and placement
// options over another number of ps: a checkpoint to reshard.
bool WrittenOverOtherShards(const Placement& running, const CheckpointManifest& manifest) {
  const int parts = static_cast<int>(manifest.parts.size());
  if (parts < 1 || parts == running.num_shards()) return false;
  StatusOr<Placement> then = running.WithShards(parts);
  return then.ok() && then->Hash() == manifest.placement_hash;
}

}  // namespace

Checkpointer::Checkpointer(std::string dir, int keep, uint64_t cluster_id, ShardAdmin* ps)
    : dir_(std::move(dir)),
      keep_(keep),
      placement_hash_(ps->placement().Hash()),
      cluster_id_(cluster_id),
      ps_(ps) {}

std::string Checkpointer::Name(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%012lld", kPrefix, static_cast<long long>(step));
  return name;
}

Status Checkpointer::Save(int64_t step, int64_t run_started_unix, int lr_lowerings) {
  const std::string folder = dir_ + "/" + Name(step);
  StatusOr<std::vector<FileDigest>> parts = ps_->SaveCheckpoint(Name(step), step);
  Status saved = parts.status();
  if (saved.ok()) {
    CheckpointManifest manifest{step, placement_hash_, cluster_id_, std::move(parts).value(),
                                run_started_unix};
    manifest.lr_lowerings = lr_lowerings;
    saved = WriteManifest(folder, manifest);
  }
  if (!saved.ok()) {
    std::error_code error;
    fs::remove_all(folder, error);
    return Status(saved.code(), "checkpoint " + folder + " failed: " + saved.message());
  }
  LOG(INFO) << "checkpoint " << folder << " saved at step " << step;
  Prune();
  return Status::OK();
}

StatusOr<std::optional<FoundCheckpoint>> Checkpointer::FindNewest() const {
  for (const auto& [step, name] : CheckpointFolders(dir_)) {
    const std::string folder = dir_ + "/" + name;
    StatusOr<CheckpointManifest> manifest = ReadManifest(folder);
    if (manifest.ok() && manifest->placement_hash != placement_hash_ &&
        !WrittenOverOtherShards(ps_->placement(), *manifest)) {
      return FailedPrecondition("checkpoint " + folder +
                                " was written for another model or variable placement (other "
                                "--model, --placement or --partition_bytes): restore it with "
                                "the same ones or use another --checkpoint_dir");
    }
    Status valid = manifest.ok() ? VerifyParts(folder, *manifest) : manifest.status();
    if (!valid.ok()) {
      LOG(WARNING) << "skipping checkpoint " << folder << ": "
                   << (valid.code() == Code::kNotFound ? "incomplete (" + valid.message() + ")"
                                                       : valid.message());
      continue;
    }
    return std::optional<FoundCheckpoint>(FoundCheckpoint{name, std::move(manifest).value()});
  }
  return std::optional<FoundCheckpoint>();
}

Status Checkpointer::Restore(const FoundCheckpoint& checkpoint) {
  const int written_over = static_cast<int>(checkpoint.manifest.parts.size());
  if (written_over == ps_->num_shards()) {
    PST_RETURN_IF_ERROR(ps_->RestoreCheckpoint(checkpoint.name, checkpoint.manifest.step));
  } else {
    PST_RETURN_IF_ERROR(WriteResharded(checkpoint));
    Status restored = ps_->RestoreCheckpoint(kReshardFolder, checkpoint.manifest.step);
    std::error_code error;
    fs::remove_all(dir_ + "/" + kReshardFolder, error);
    PST_RETURN_IF_ERROR(restored);
    LOG(INFO) << "resharded checkpoint " << checkpoint.name << " from " << written_over << " ps to "
              << ps_->num_shards();
  }
  LOG(INFO) << "restored checkpoint " << dir_ << "/" << checkpoint.name << " at step "
            << checkpoint.manifest.step;
  return Status::OK();
}

Status Checkpointer::WriteResharded(const FoundCheckpoint& checkpoint) const {
  const std::string from_folder = dir_ + "/" + checkpoint.name;
  const std::string to_folder = dir_ + "/" + kReshardFolder;
  PST_ASSIGN_OR_RETURN(
      const Placement from,
      ps_->placement().WithShards(static_cast<int>(checkpoint.manifest.parts.size())));
  std::vector<NamedTensors> parts;
  for (int k = 0; k < from.num_shards(); ++k) {
    PST_ASSIGN_OR_RETURN(NamedTensors part, ReadTensorFile(from_folder + "/" + PartFileName(k)));
    parts.push_back(std::move(part));
  }
  StatusOr<std::vector<NamedTensors>> resharded = ReshardParts(parts, from, ps_->placement());
  if (!resharded.ok()) {
    return Status(resharded.status().code(),
                  "cannot reshard " + from_folder + ": " + resharded.status().message());
  }
  parts.clear();  // the old parts' memory, before the new ones are written
  std::error_code error;
  fs::remove_all(to_folder, error);  // a crashed chief's leftovers
  PST_RETURN_IF_ERROR(CreateFolder(to_folder, "resharding folder " + to_folder));
  for (int k = 0; k < ps_->num_shards(); ++k) {
    Status written = WriteTensorFile(to_folder + "/" + PartFileName(k), (*resharded)[k]).status();
    if (!written.ok()) {
      fs::remove_all(to_folder, error);
      return written;
    }
  }
  return Status::OK();
}

void Checkpointer::Prune() const {
  int complete = 0;
  for (const auto& [step, name] : CheckpointFolders(dir_)) {
    const std::string folder = dir_ + "/" + name;
    const bool has_manifest = fs::exists(folder + "/" + kManifestName);
    if (has_manifest && ++complete <= keep_) continue;
    if (!has_manifest && complete == 0) continue;  // newer than every complete one
    std::error_code error;
    fs::remove_all(folder, error);
    if (error) LOG(WARNING) << "cannot remove old checkpoint " << folder << ": " << error.message();
  }
}

uint64_t KeptClusterId(const std::string& dir) {
  if (const std::optional<CheckpointManifest> newest = NewestManifest(dir)) {
    return newest->cluster_id;
  }
  uint64_t id = 0;
  std::ifstream(dir + "/" + kClusterIdFile) >> id;
  return id;
}

Status KeepClusterId(const std::string& dir, uint64_t id) {
  PST_RETURN_IF_ERROR(CreateFolder(dir, "checkpoint folder " + dir));
  return WriteFileAtomically(dir + "/" + kClusterIdFile, std::to_string(id) + "\n");
}

std::optional<CheckpointManifest> NewestManifest(const std::string& dir) {
  for (const auto& [step, name] : CheckpointFolders(dir)) {
    auto manifest = ReadManifest(dir + "/" + name);
    if (manifest.ok()) return std::move(manifest).value();
  }
  return std::nullopt;
}

}  // namespace pst
