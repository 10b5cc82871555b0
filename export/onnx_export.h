// A trained model (job/model_file.h) as an ONNX model, to serve with ONNX
// Runtime or any ONNX tool (IR version 7, opset 13, the default domain).
//
// The graph takes "features", float32 [batch, D]: an example's values as
// pstrain's data readers give them (MNIST and records pixels scaled to
// [0,1], CSV features as read), NHWC order for images. The run's
// standardization, if any, is the graph's first step, so callers never
// apply it. The graph gives "probabilities", float32 [batch, classes]: the
// softmax of the logits, what `predict --output` writes. Images are moved
// to NCHW for the convolutions and back to NHWC before the first dense
// layer; filters are stored OIHW. A batch normalization is a
// BatchNormalization node, which normalizes axis 1: the channels of NCHW
// images, or the features of [batch, C] rows after a dense layer; its
// moving variance is stored as max(v, 0), as pstrain normalizes with it.
// Initializers carry the variables' names.
#ifndef PST_EXPORT_ONNX_EXPORT_H_
#define PST_EXPORT_ONNX_EXPORT_H_

#include <string>

#include "common/status.h"
#include "job/model_file.h"

namespace pst {

// The serialized ModelProto. InvalidArgument when the model cannot be
// rebuilt from `trained` (an unknown model, parameters of other shapes).
StatusOr<std::string> OnnxModel(const TrainedModel& trained);

// OnnxModel written to `path` atomically; the file system's errors name
// the path.
Status WriteOnnxModel(const std::string& path, const TrainedModel& trained);

}  // namespace pst

#endif  // PST_EXPORT_ONNX_EXPORT_H_
