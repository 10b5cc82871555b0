#include "model/parallel/pipeline_split.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>

#include "common/tensor.h"

namespace pst {

int64_t LayerCost(const Layer& layer) {
  const std::vector<VariableSpec> variables = layer.Variables();
  if (variables.size() < 2) return layer.in_dim();
  const int64_t weights = NumElements(variables[0].shape);
  const int64_t biases = NumElements(variables[1].shape);
  return weights * (layer.out_dim() / std::max<int64_t>(biases, 1));
}

std::vector<size_t> SplitStages(const std::vector<int64_t>& costs, int num_stages) {
  const size_t n = costs.size();
  CHECK_GE(num_stages, 1);
  CHECK_LE(static_cast<size_t>(num_stages), n);
  std::vector<int64_t> prefix(n + 1, 0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i];
  // best[s][i]: the least possible costliest stage when the first i layers
  // form s stages; cut[s][i]: where the last of those stages starts.
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  const size_t stages = static_cast<size_t>(num_stages);
  std::vector<std::vector<int64_t>> best(stages + 1, std::vector<int64_t>(n + 1, kInf));
  std::vector<std::vector<size_t>> cut(stages + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t s = 1; s <= stages; ++s) {
    for (size_t i = s; i <= n; ++i) {
      for (size_t j = s - 1; j < i; ++j) {
        if (best[s - 1][j] == kInf) continue;
        const int64_t worst = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        if (worst < best[s][i]) {
          best[s][i] = worst;
          cut[s][i] = j;
        }
      }
    }
  }
  std::vector<size_t> starts(stages);
  size_t end = n;
  for (size_t s = stages; s >= 1; --s) {
    starts[s - 1] = cut[s][end];
    end = cut[s][end];
  }
  return starts;
}

}  // namespace pst
