// Per-feature standardization (--normalize): each feature shifted by its
// mean and divided by its standard deviation, both computed on the training
// split only, so that nothing of the test or validation examples leaks into
// training. A constant feature is only shifted. Dense features only: sparse
// entries (criteo, libsvm) are left as they are, and a dataset without dense
// features (feature_dim 0) is left unchanged.
#ifndef PST_DATA_STANDARDIZE_H_
#define PST_DATA_STANDARDIZE_H_

#include <vector>

#include "data/dataset.h"

namespace pst {

struct Standardization {
  std::vector<float> mean, scale;  // per feature; x' = (x - mean) * scale
};

Standardization FitStandardization(const Dataset& train);
void Standardize(const Standardization& s, Dataset* data);
// The same on rows of s.mean.size() features laid end to end.
void StandardizeRows(const Standardization& s, std::vector<float>* rows);

}  // namespace pst

#endif  // PST_DATA_STANDARDIZE_H_
