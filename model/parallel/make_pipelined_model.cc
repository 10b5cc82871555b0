#include "model/parallel/make_pipelined_model.h"

#include <utility>
#include <vector>

#include "common/split.h"
#include "model/parallel/pipeline_split.h"
#include "model/parallel/pipeline_stage.h"
#include "model/parallel/pipelined_model.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

Status MicroBatchesError(int micro_batches) {
  return InvalidArgument(std::to_string(micro_batches) +
                         " micro-batches: a batch is cut into at least 1");
}

}  // namespace

StatusOr<std::unique_ptr<Model>> MakePipelinedModel(const std::string& name,
                                                    const InputShape& input, int64_t num_classes,
                                                    const std::string& device,
                                                    const PipelineOptions& pipeline,
                                                    const KernelsOptions& options) {
  if (pipeline.stages < 1) {
    return InvalidArgument(std::to_string(pipeline.stages) +
                           " pipeline stages: a model needs at least 1");
  }
  if (pipeline.micro_batches < 1) return MicroBatchesError(pipeline.micro_batches);
  // Checked before any device is touched: starting a GPU takes a while.
  PST_RETURN_IF_ERROR(CheckModelTakes(name, input, num_classes));
  std::vector<std::string> devices = SplitCommas(device);
  for (const std::string& one : devices) {
    if (one.empty()) {
      return InvalidArgument("empty device in '" + device +
                             "': expected 'cpu', 'gpu:N' or a comma-separated list of them");
    }
  }
  if (devices.size() == 1) devices.assign(pipeline.stages, devices.front());
  if (devices.size() != static_cast<size_t>(pipeline.stages)) {
    return InvalidArgument("device list '" + device + "' names " + std::to_string(devices.size()) +
                           " devices for " + std::to_string(pipeline.stages) +
                           " pipeline stages: give one device per stage, or one for all (data "
                           "parallelism within a model-parallel worker is not supported)");
  }
  std::vector<std::unique_ptr<Kernels>> kernels;
  for (const std::string& one : devices) {
    PST_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> k, MakeKernels(one, options));
    kernels.push_back(std::move(k));
  }
  return MakePipelinedModelOnKernels(name, input, num_classes, std::move(kernels),
                                     pipeline.micro_batches);
}

StatusOr<std::unique_ptr<Model>> MakePipelinedModelOnKernels(
    const std::string& name, const InputShape& input, int64_t num_classes,
    std::vector<std::unique_ptr<Kernels>> kernels, int micro_batches) {
  const int num_stages = static_cast<int>(kernels.size());
  if (num_stages < 1) return InvalidArgument("no device to run on");
  if (micro_batches < 1) return MicroBatchesError(micro_batches);
  // The cut, from a stack on the first back end (layers allocate nothing
  // until Reserve).
  PST_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Layer>> stack,
                       MakeLayers(name, input, num_classes, *kernels.front()));
  if (static_cast<size_t>(num_stages) > stack.size()) {
    return InvalidArgument(std::to_string(num_stages) + " pipeline stages: model " + name +
                           " has only " + std::to_string(stack.size()) +
                           " layers to give the stages, at least one each");
  }
  std::vector<int64_t> costs;
  for (const std::unique_ptr<Layer>& layer : stack) costs.push_back(LayerCost(*layer));
  std::vector<size_t> starts = SplitStages(costs, num_stages);
  starts.push_back(stack.size());
  stack.clear();

  std::vector<std::unique_ptr<PipelineStage>> stages;
  for (int k = 0; k < num_stages; ++k) {
    std::vector<PipelineStage::Layers> slots;
    for (int m = 0; m < micro_batches; ++m) {
      PST_ASSIGN_OR_RETURN(PipelineStage::Layers all,
                           MakeLayers(name, input, num_classes, *kernels[k]));
      PipelineStage::Layers slice;
      for (size_t i = starts[k]; i < starts[k + 1]; ++i) slice.push_back(std::move(all[i]));
      slots.push_back(std::move(slice));
    }
    stages.push_back(std::make_unique<PipelineStage>(std::move(kernels[k]), std::move(slots),
                                                     /*first=*/k == 0,
                                                     /*last=*/k + 1 == num_stages));
  }
  return std::unique_ptr<Model>(new PipelinedModel(std::move(stages), micro_batches));
}

}  // namespace pst
