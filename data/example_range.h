// Consecutive examples of a Dataset as a Batch (evaluation and prediction go
// through a set in order), sparse features included.
#ifndef PST_DATA_EXAMPLE_RANGE_H_
#define PST_DATA_EXAMPLE_RANGE_H_

#include <cstdint>

#include "common/batch.h"
#include "data/dataset.h"

namespace pst {

// Examples [begin, begin + n) of `data` into *batch (its vectors reused).
void CopyExamples(const Dataset& data, int64_t begin, int64_t n, Batch* batch);

}  // namespace pst

#endif  // PST_DATA_EXAMPLE_RANGE_H_
