// MakePipelinedModel: a zoo model (or a --model_spec model) cut into
// pipeline stages, for --model_parallel and --micro_batches
// (model/parallel/pipelined_model.h).
#ifndef PST_MODEL_PARALLEL_MAKE_PIPELINED_MODEL_H_
#define PST_MODEL_PARALLEL_MAKE_PIPELINED_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace pst {

struct PipelineOptions {
  int stages = 2;         // --model_parallel
  int micro_batches = 4;  // --micro_batches: the most a batch is cut into
};

// Model `name` cut into pipeline.stages stages of about equal multiply-adds
// (model/parallel/pipeline_split.h), stage k on the k-th device of `device` (a
// comma-separated list of pipeline.stages devices) or all of them on
// `device` when it names one ("cpu": one thread per stage). `options` go to
// every MakeKernels call.
// Errors: InvalidArgument for stages or micro_batches below 1, more stages
// than the model has layers, a device list of another length, an empty
// device, and MakeModel's model checks; the devices' errors from
// MakeKernels.
StatusOr<std::unique_ptr<Model>> MakePipelinedModel(const std::string& name,
                                                    const InputShape& input, int64_t num_classes,
                                                    const std::string& device,
                                                    const PipelineOptions& pipeline,
                                                    const KernelsOptions& options = {});

// As MakePipelinedModel, on back ends the caller made (a test's fake
// device): stage k on kernels[k], which the model takes over.
StatusOr<std::unique_ptr<Model>> MakePipelinedModelOnKernels(
    const std::string& name, const InputShape& input, int64_t num_classes,
    std::vector<std::unique_ptr<Kernels>> kernels, int micro_batches);

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_MAKE_PIPELINED_MODEL_H_
