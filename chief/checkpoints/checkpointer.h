// Checkpointer: the chief's side of checkpoints in --checkpoint_dir.
//
// Save(step) asks every ps to write its part into <dir>/ckpt-<step>/, then
// writes the manifest (last: a checkpoint without one is incomplete), then
// keeps only the newest --keep_checkpoints complete ones. A save that fails
// removes its incomplete folder and leaves the older checkpoints alone.
// FindNewest() picks the newest checkpoint whose manifest and parts all verify,
// warning about each one it skips. One written over another number of ps, with
// the same model and placement options, is restored resharded (reshard.h):
// the chief writes the parts for the running ps into <dir>/resharding/, the
// ps restore them, and the folder goes. One written for another model or
// partitioning is refused with an error.
//
// Thread safety: none; used by the chief's main thread.
#ifndef PST_CHIEF_CHECKPOINTS_CHECKPOINTER_H_
#define PST_CHIEF_CHECKPOINTS_CHECKPOINTER_H_

#include <optional>
#include <string>

#include "chief/checkpoints/checkpoint_manifest.h"
#include "ps/shard_admin.h"

namespace pst {

struct FoundCheckpoint {
  std::string name;             // "ckpt-000000001200"
  CheckpointManifest manifest;  // manifest.parts: one per ps it was written over
};

class Checkpointer {
 public:
  // `ps` is borrowed and must outlive the checkpointer; its placement is
  // the one checkpoints are written under.
  Checkpointer(std::string dir, int keep, uint64_t cluster_id, ShardAdmin* ps);

  // For the manifest: `run_started_unix`, when the run first opened
  // training; `lr_lowerings`, k of a plateau schedule (0 for another).
  Status Save(int64_t step, int64_t run_started_unix, int lr_lowerings = 0);
  StatusOr<std::optional<FoundCheckpoint>> FindNewest() const;
  Status Restore(const FoundCheckpoint& checkpoint);

  static std::string Name(int64_t step);

 private:
  void Prune() const;
  // Writes `checkpoint`'s parts cut for the running ps into kReshardFolder.
  Status WriteResharded(const FoundCheckpoint& checkpoint) const;

  const std::string dir_;
  const int keep_;
  const uint64_t placement_hash_;
  const uint64_t cluster_id_;
  ShardAdmin* ps_;
};

// The newest readable manifest under `dir`: a restarted chief keeps its
// cluster's id (so running ps and workers accept it) and the run's start.
std::optional<CheckpointManifest> NewestManifest(const std::string& dir);

// The cluster id a chief restarted with this `dir` must keep: the newest
// manifest's, else the one KeepClusterId() recorded before the first
// checkpoint (a chief lost before it would otherwise come back with a new id
// that the running ps refuse). 0 when neither is there.
uint64_t KeptClusterId(const std::string& dir);
// Records `id` in <dir>/cluster_id (creating `dir`).
Status KeepClusterId(const std::string& dir, uint64_t id);

}  // namespace pst

#endif  // PST_CHIEF_CHECKPOINTS_CHECKPOINTER_H_
