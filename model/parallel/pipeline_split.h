// How a pipelined model cuts its layer stack into stages: consecutive
// slices, never inside a layer, of about equal compute.
//
// A layer's cost is its multiply-adds per example, read off its variables:
// a layer whose first variable is a weight W and second a bias b does
// |W| * out_dim / |b| (a dense layer: in*out; a convolution: its weights
// applied at each of its P*Q output positions); a layer without variables
// (an activation, a pool, dropout) does in_dim, one operation per input.
// Parameter count alone would misjudge convolutions, which have few
// parameters and most of the FLOPs.
#ifndef PST_MODEL_PARALLEL_PIPELINE_SPLIT_H_
#define PST_MODEL_PARALLEL_PIPELINE_SPLIT_H_

#include <cstdint>
#include <vector>

#include "model/layers/layer.h"

namespace pst {

// Multiply-adds per example of `layer`, as above.
int64_t LayerCost(const Layer& layer);

// The first layer of each of `num_stages` stages over layers of these
// costs: starts[0] = 0, strictly increasing, every stage non-empty, chosen
// to make the costliest stage as cheap as possible. Requires 1 <= num_stages <= costs.size()
// (CHECKed).
std::vector<size_t> SplitStages(const std::vector<int64_t>& costs, int num_stages);

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_PIPELINE_SPLIT_H_
