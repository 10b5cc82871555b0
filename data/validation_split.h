// The validation split: `count` examples of a training set held out for
// model selection, chosen by a seeded shuffle of our own (not std::shuffle,
// whose algorithm the standard leaves open) so that every task of a job,
// on any platform, holds out the same examples.
#ifndef PST_DATA_VALIDATION_SPLIT_H_
#define PST_DATA_VALIDATION_SPLIT_H_

#include <cstdint>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// Moves `count` examples of `*train` (each whole: features, label and sparse
// entries) into the returned set; the rest stay in
// `*train`, in their original order. InvalidArgument when `count` leaves no
// training example or is negative.
StatusOr<Dataset> SplitValidation(Dataset* train, int64_t count, uint64_t seed);

}  // namespace pst

#endif  // PST_DATA_VALIDATION_SPLIT_H_
