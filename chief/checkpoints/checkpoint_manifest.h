// The manifest of a checkpoint: written by the chief after every ps has
// written its part, so a checkpoint without one is incomplete. It records
// the step, the placement (parts are only valid under the placement that
// wrote them), the cluster id (a restarted chief keeps it) and each part's
// size and CRC32, when the run first opened training (so a restarted
// chief reports the whole run's time) and, for --lr_schedule=plateau, how
// many times the chief had lowered the learning rate (the ps do not keep it
// in their parts). Text, one "key value" per line, ending with a CRC32 of
// the lines before it.
#ifndef PST_CHIEF_CHECKPOINTS_CHECKPOINT_MANIFEST_H_
#define PST_CHIEF_CHECKPOINTS_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor_file.h"

namespace pst {

struct CheckpointManifest {
  int64_t step = 0;
  uint64_t placement_hash = 0;
  uint64_t cluster_id = 0;
  std::vector<FileDigest> parts;  // parts[k] describes "ps-<k>.part"
  int64_t run_started_unix = 0;   // seconds since the epoch; 0: not recorded
  // k of a plateau schedule (chief/lr_plateau.h); 0 in manifests written
  // before it was recorded, which had no plateau schedule.
  int lr_lowerings = 0;
  // 1: parts[k].crc32 is meaningless (see checkpoint_manifest.cc).
  int format_version = 2;
};

inline constexpr char kManifestName[] = "manifest";
std::string PartFileName(int shard);  // "ps-3.part"

// <folder>/manifest, written atomically.
Status WriteManifest(const std::string& folder, const CheckpointManifest& manifest);
// NotFound when absent; DataLoss naming the file when malformed or corrupt.
StatusOr<CheckpointManifest> ReadManifest(const std::string& folder);

}  // namespace pst

#endif  // PST_CHIEF_CHECKPOINTS_CHECKPOINT_MANIFEST_H_
