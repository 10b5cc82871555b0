// Resharding a checkpoint: the parts written under one placement, cut again
// for the same variables and tables placed over another number of ps
// (docs/FORMATS.md, "A checkpoint part").
//
// - A dense variable is put together from its slices, value and optimizer
//   slots alike, and cut along the new placement's slices. A new slice's
//   version and update count are the largest of the old slices it takes rows
//   from: in sync training every push reaches every slice, so they agree; in
//   async training the largest keeps a pull's staleness from going negative.
// - A table row goes to shard id mod the new count, with its slots and
//   version; each part keeps its rows ascending by id. A table's apply count
//   (Adam's bias correction) is the largest of the old shards'.
// - The sync step is the largest of the parts' (they agree in a checkpoint).
//
// Pure: no files, no ps. Names, dtypes and shapes are checked against `from`
// before anything is cut; what is missing or misshapen is DataLoss naming it.
#ifndef PST_CHIEF_CHECKPOINTS_RESHARD_H_
#define PST_CHIEF_CHECKPOINTS_RESHARD_H_

#include <vector>

#include "cluster/placement.h"
#include "common/status.h"
#include "common/tensor_file.h"

namespace pst {

// parts[k]: what ps k wrote under `from`; returns what ps k of `to` restores.
// `from` and `to` must hold the same variables and tables.
StatusOr<std::vector<NamedTensors>> ReshardParts(const std::vector<NamedTensors>& parts,
                                                 const Placement& from, const Placement& to);

}  // namespace pst

#endif  // PST_CHIEF_CHECKPOINTS_RESHARD_H_
