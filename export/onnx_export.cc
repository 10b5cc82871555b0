#include "export/onnx_export.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "export/proto_writer.h"
#include "kernels/cpu_kernels.h"
#include "model/ctr/ctr_model.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

// The field numbers and enum values of onnx/onnx.proto that the export
// writes, each under the name of its message there (TensorProto::kDims is
// TensorProto.dims).
namespace onnx {
constexpr int64_t kIrVersion = 7;  // the IR version that goes with opset 13
constexpr int64_t kOpsetVersion = 13;
struct ModelProto {
  enum Field {
    kIrVersion = 1,
    kProducerName = 2,
    kProducerVersion = 3,
    kDocString = 6,
    kGraph = 7,
    kOpsetImport = 8
  };
};
struct OperatorSetIdProto {
  enum Field { kDomain = 1, kVersion = 2 };
};
struct GraphProto {
  enum Field { kNode = 1, kName = 2, kInitializer = 5, kInput = 11, kOutput = 12 };
};
struct NodeProto {
  enum Field { kInput = 1, kOutput = 2, kName = 3, kOpType = 4, kAttribute = 5 };
};
struct AttributeProto {
  enum Field { kName = 1, kF = 2, kI = 3, kInts = 8, kType = 20 };
  struct AttributeType {
    enum Value { kFloat = 1, kInt = 2, kInts = 7 };
  };
};
struct TensorProto {
  enum Field { kDims = 1, kDataType = 2, kName = 8, kRawData = 9 };
  enum DataType { kFloat = 1, kInt64 = 7 };
};
struct ValueInfoProto {
  enum Field { kName = 1, kType = 2 };
};
struct TypeProto {
  enum Field { kTensorType = 1 };
  struct Tensor {
    enum Field { kElemType = 1, kShape = 2 };
  };
};
struct TensorShapeProto {
  enum Field { kDim = 1 };
  struct Dimension {
    enum Field { kDimValue = 1, kDimParam = 2 };
  };
};
}  // namespace onnx

// A node's AttributeProto: one float32, one int64, or a list of int64s.
ProtoWriter FloatAttribute(const std::string& name, float value) {
  ProtoWriter a;
  a.Bytes(onnx::AttributeProto::kName, name)
      .Varint(onnx::AttributeProto::kType, onnx::AttributeProto::AttributeType::kFloat);
  return a.Float(onnx::AttributeProto::kF, value);
}

ProtoWriter IntAttribute(const std::string& name, int64_t value) {
  ProtoWriter a;
  a.Bytes(onnx::AttributeProto::kName, name)
      .Varint(onnx::AttributeProto::kType, onnx::AttributeProto::AttributeType::kInt);
  return a.Varint(onnx::AttributeProto::kI, value);
}

ProtoWriter IntsAttribute(const std::string& name, const std::vector<int64_t>& values) {
  ProtoWriter a;
  a.Bytes(onnx::AttributeProto::kName, name)
      .Varint(onnx::AttributeProto::kType, onnx::AttributeProto::AttributeType::kInts);
  for (int64_t v : values) a.Varint(onnx::AttributeProto::kInts, v);
  return a;
}

// A graph input or output (a ValueInfoProto): float32 (or `elements`)
// [batch, width], batch left free.
ProtoWriter BatchOfRows(const std::string& name, int64_t width,
                        onnx::TensorProto::DataType elements = onnx::TensorProto::kFloat) {
  ProtoWriter batch, row, shape, tensor_type, type, value;
  batch.Bytes(onnx::TensorShapeProto::Dimension::kDimParam, "batch");
  row.Varint(onnx::TensorShapeProto::Dimension::kDimValue, width);
  shape.Message(onnx::TensorShapeProto::kDim, batch).Message(onnx::TensorShapeProto::kDim, row);
  tensor_type.Varint(onnx::TypeProto::Tensor::kElemType, elements)
      .Message(onnx::TypeProto::Tensor::kShape, shape);
  type.Message(onnx::TypeProto::kTensorType, tensor_type);
  return value.Bytes(onnx::ValueInfoProto::kName, name).Message(onnx::ValueInfoProto::kType, type);
}

template <typename T>
std::string_view RawBytes(const std::vector<T>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}

// The graph, node by node, from "features" to "probabilities", keeping
// track of the tensor the next node reads and whether it is [B, D] rows or
// NCHW images.
class GraphWriter {
 public:
  explicit GraphWriter(int64_t input_dim) : input_dim_(input_dim) {}

  void Standardize(const Standardization& s) {
    const int64_t d = static_cast<int64_t>(s.mean.size());
    Initializer("standardize/mean", onnx::TensorProto::kFloat, {d}, RawBytes(s.mean));
    Initializer("standardize/scale", onnx::TensorProto::kFloat, {d}, RawBytes(s.scale));
    Node("Sub", {current_, "standardize/mean"}, {});
    Node("Mul", {current_, "standardize/scale"}, {});
    dense_features_ = current_;
  }

  void Dense(const std::string& name, const ::pst::Tensor& weights, const ::pst::Tensor& bias) {
    ToRows();
    Initializer(name + "/weights", onnx::TensorProto::kFloat, weights.shape(), FloatBytes(weights));
    Initializer(name + "/bias", onnx::TensorProto::kFloat, bias.shape(), FloatBytes(bias));
    Node("Gemm", {current_, name + "/weights", name + "/bias"}, {});
  }

  // The filters come HWIO (R,S,C,K) and are stored OIHW (K,C,R,S).
  void Conv(const std::string& name, const Conv2DShape& c, const ::pst::Tensor& weights,
            const ::pst::Tensor& bias) {
    ToImages(c);
    const int64_t r_n = c.filter_height, s_n = c.filter_width;
    const int64_t c_n = c.in_channels, k_n = c.out_channels;
    std::vector<float> oihw(weights.num_elements());
    const float* hwio = weights.f32();
    for (int64_t r = 0; r < r_n; ++r)
      for (int64_t s = 0; s < s_n; ++s)
        for (int64_t ci = 0; ci < c_n; ++ci)
          for (int64_t k = 0; k < k_n; ++k)
            oihw[((k * c_n + ci) * r_n + r) * s_n + s] = hwio[((r * s_n + s) * c_n + ci) * k_n + k];
    Initializer(name + "/weights", onnx::TensorProto::kFloat, {k_n, c_n, r_n, s_n}, RawBytes(oihw));
    Initializer(name + "/bias", onnx::TensorProto::kFloat, bias.shape(), FloatBytes(bias));
    const int64_t p = c.padding;
    Node("Conv", {current_, name + "/weights", name + "/bias"},
         {IntsAttribute("kernel_shape", {r_n, s_n}), IntsAttribute("strides", {c.stride, c.stride}),
          IntsAttribute("pads", {p, p, p, p})});
  }

  void MaxPool2x2(const Conv2DShape& image) {
    ToImages(image);
    Node("MaxPool", {current_},
         {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})});
  }

  // BatchNormalization normalizes axis 1: the channels of NCHW images, and
  // the features of [B, C] rows (after a dense layer, or 1x1xC). Rows of
  // pixels (a batchnorm on the input image) become NCHW images first. The
  // moving variance is stored as max(v, 0), what pstrain normalizes with
  // (a stale async delta can leave it below 0).
  void BatchNormalization(const std::string& name, const Conv2DShape& image, double epsilon,
                          const ::pst::Tensor& gamma, const ::pst::Tensor& beta,
                          const ::pst::Tensor& moving_mean, const ::pst::Tensor& moving_variance) {
    if (image.height * image.width > 1) ToImages(image);
    const float* v = moving_variance.f32();
    std::vector<float> variance(v, v + moving_variance.num_elements());
    for (float& x : variance) x = std::max(x, 0.0f);
    Initializer(name + "/gamma", onnx::TensorProto::kFloat, gamma.shape(), FloatBytes(gamma));
    Initializer(name + "/beta", onnx::TensorProto::kFloat, beta.shape(), FloatBytes(beta));
    Initializer(name + "/moving_mean", onnx::TensorProto::kFloat, moving_mean.shape(),
                FloatBytes(moving_mean));
    Initializer(name + "/moving_variance", onnx::TensorProto::kFloat, moving_variance.shape(),
                RawBytes(variance));
    Node("BatchNormalization",
         {current_, name + "/gamma", name + "/beta", name + "/moving_mean",
          name + "/moving_variance"},
         {FloatAttribute("epsilon", static_cast<float>(epsilon))});
  }

  void Elementwise(const std::string& op) { Node(op, {current_}, {}); }

  // A click model's input side (model/ctr/ctr_model.h): "keys", int64 [batch,
  // fields], one key per field; each key's row id is key mod `rows` (ONNX's
  // integer Mod, as the model maps them); the deep table's rows of the
  // fields, side by side, after the (standardized) dense features.
  void ClickEmbedding(int64_t fields, int64_t rows, const ::pst::Tensor& deep) {
    click_fields_ = fields;
    const std::vector<int64_t> modulus = {rows};
    Initializer("table_rows", onnx::TensorProto::kInt64, {}, RawBytes(modulus));
    Node("Mod", {"keys", "table_rows"}, {IntAttribute("fmod", 0)}, "row_ids");
    const int64_t dim = deep.shape()[1];
    Initializer("deep/embedding", onnx::TensorProto::kFloat, deep.shape(), FloatBytes(deep));
    Node("Gather", {"deep/embedding", "row_ids"}, {IntAttribute("axis", 0)});
    const std::vector<int64_t> flat = {-1, fields * dim};
    Initializer("embedding_shape", onnx::TensorProto::kInt64, {2}, RawBytes(flat));
    Node("Reshape", {current_, "embedding_shape"}, {}, "embedded");
    if (input_dim_ > 0) {
      Node("Concat", {dense_features_, "embedded"}, {IntAttribute("axis", 1)}, "x0");
    }
  }

  // A deep table and the fields reading it (model/ctr/ctr_model.h): with
  // key ranges (fixed tables of several dims), a field's entry of row id
  // `id` reads row base + ((id - range.offset) mod range.rows) of its
  // table, else row `id`.
  struct DeepTable {
    std::string name;
    const ::pst::Tensor* rows = nullptr;
  };
  struct FieldRows {
    size_t table = 0;  // in the DeepTables
    bool ranged = false;
    KeyRange range;
    int64_t base = 0;
  };

  // A click model whose fields have different dims: "keys" mod `rows` as
  // the row ids (the wide table's); then CtrModel::DeepRow's row of each
  // field in its own table, the same Sub, Mod (fmod 0: in [0, range
  // rows)) and Add on every field's column at once; then per field a
  // Gather of its column and of its table's rows, [batch, its dim]; the
  // field vectors side by side in field order (the model's fields_) as
  // "embedded", after the (standardized) dense features.
  void ClickFieldEmbeddings(int64_t rows, const std::vector<DeepTable>& tables,
                            const std::vector<FieldRows>& fields) {
    const int64_t n = static_cast<int64_t>(fields.size());
    click_fields_ = n;
    Initializer("table_rows", onnx::TensorProto::kInt64, {}, RawBytes(std::vector<int64_t>{rows}));
    Node("Mod", {"keys", "table_rows"}, {IntAttribute("fmod", 0)}, "row_ids");
    std::vector<int64_t> offsets, range_rows, bases;
    for (const FieldRows& f : fields) {
      offsets.push_back(f.ranged ? f.range.offset : 0);
      range_rows.push_back(f.ranged ? f.range.rows : rows);
      bases.push_back(f.ranged ? f.base : 0);
    }
    Initializer("field_offsets", onnx::TensorProto::kInt64, {n}, RawBytes(offsets));
    Initializer("field_rows", onnx::TensorProto::kInt64, {n}, RawBytes(range_rows));
    Initializer("field_bases", onnx::TensorProto::kInt64, {n}, RawBytes(bases));
    Node("Sub", {"row_ids", "field_offsets"}, {});
    Node("Mod", {current_, "field_rows"}, {IntAttribute("fmod", 0)});
    Node("Add", {current_, "field_bases"}, {}, "deep_rows");
    for (const DeepTable& t : tables) {
      Initializer(t.name, onnx::TensorProto::kFloat, t.rows->shape(), FloatBytes(*t.rows));
    }
    std::vector<std::string> vectors;
    for (int64_t f = 0; f < n; ++f) {
      const std::string column = "field" + std::to_string(f) + "/column";
      Initializer(column, onnx::TensorProto::kInt64, {}, RawBytes(std::vector<int64_t>{f}));
      Node("Gather", {"deep_rows", column}, {IntAttribute("axis", 1)});
      Node("Gather", {tables[fields[f].table].name, current_}, {IntAttribute("axis", 0)});
      vectors.push_back(current_);
    }
    Node("Concat", vectors, {IntAttribute("axis", 1)}, "embedded");
    if (input_dim_ > 0) {
      Node("Concat", {dense_features_, "embedded"}, {IntAttribute("axis", 1)}, "x0");
    }
  }

  // The tensor the next node reads, and making another one it.
  const std::string& current() const { return current_; }
  void Use(const std::string& tensor) { current_ = tensor; }
  const std::string& dense_features() const { return dense_features_; }

  // Element-wise `op` of two named tensors (Add, Mul, Sub).
  void Binary(const std::string& op, const std::string& a, const std::string& b) {
    Node(op, {a, b}, {});
  }
  void Concat(const std::vector<std::string>& parts) {
    Node("Concat", parts, {IntAttribute("axis", 1)});
  }

  // FM's pairwise term of "embedded" ([batch, fields * dim]), [batch, 1]:
  // 0.5 * (sum_c (sum_f e_fc)^2 - sum_fc e_fc^2).
  void FmTerm(int64_t fields, int64_t dim) {
    const std::vector<int64_t> by_field = {-1, fields, dim};
    Initializer("fm/shape", onnx::TensorProto::kInt64, {3}, RawBytes(by_field));
    Initializer("fm/axis1", onnx::TensorProto::kInt64, {1}, RawBytes(std::vector<int64_t>{1}));
    Node("Reshape", {"embedded", "fm/shape"}, {});
    Node("ReduceSum", {current_, "fm/axis1"}, {IntAttribute("keepdims", 0)});
    const std::string sum = current_;
    Node("Mul", {sum, sum}, {});
    Node("ReduceSum", {current_, "fm/axis1"}, {IntAttribute("keepdims", 1)});
    const std::string square_of_sum = current_;
    Node("Mul", {"embedded", "embedded"}, {});
    Node("ReduceSum", {current_, "fm/axis1"}, {IntAttribute("keepdims", 1)});
    Node("Sub", {square_of_sum, current_}, {});
    Initializer("fm/half", onnx::TensorProto::kFloat, {1}, RawBytes(std::vector<float>{0.5f}));
    Node("Mul", {current_, "fm/half"}, {}, "fm");
  }

  // DLRM's interaction: the pairwise dot products (i < j, row by row) of
  // the vectors [bottom (when given), the fields' rows], [batch, pairs].
  void DotTerm(const std::string& bottom, int64_t fields, int64_t dim) {
    const int64_t n = fields + (bottom.empty() ? 0 : 1);
    const std::vector<int64_t> by_field = {-1, fields, dim}, by_vector = {-1, 1, dim};
    Initializer("dot/fields_shape", onnx::TensorProto::kInt64, {3}, RawBytes(by_field));
    Node("Reshape", {"embedded", "dot/fields_shape"}, {});
    if (!bottom.empty()) {
      const std::string field_vectors = current_;
      Initializer("dot/bottom_shape", onnx::TensorProto::kInt64, {3}, RawBytes(by_vector));
      Node("Reshape", {bottom, "dot/bottom_shape"}, {});
      Node("Concat", {current_, field_vectors}, {IntAttribute("axis", 1)});
    }
    const std::string vectors = current_;
    Node("Transpose", {vectors}, {IntsAttribute("perm", {0, 2, 1})});
    Node("MatMul", {vectors, current_}, {});
    const std::vector<int64_t> flat = {-1, n * n};
    Initializer("dot/flat_shape", onnx::TensorProto::kInt64, {2}, RawBytes(flat));
    Node("Reshape", {current_, "dot/flat_shape"}, {});
    std::vector<int64_t> upper;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) upper.push_back(i * n + j);
    }
    Initializer("dot/pairs", onnx::TensorProto::kInt64, {static_cast<int64_t>(upper.size())},
                RawBytes(upper));
    Node("Gather", {current_, "dot/pairs"}, {IntAttribute("axis", 1)}, "dots");
  }

  // The logit (the last Gemm's [batch, 1]) plus, with a wide table, its
  // weights of the keys summed; then (1 - p, p) as "probabilities".
  ProtoWriter FinishClick(const ::pst::Tensor* wide) {
    if (wide != nullptr) {
      const std::string logit = current_;
      Initializer("wide/weights", onnx::TensorProto::kFloat, wide->shape(), FloatBytes(*wide));
      Node("Gather", {"wide/weights", "row_ids"}, {IntAttribute("axis", 0)});
      const std::vector<int64_t> axes = {1};
      Initializer("field_axis", onnx::TensorProto::kInt64, {1}, RawBytes(axes));
      Node("ReduceSum", {current_, "field_axis"}, {IntAttribute("keepdims", 0)});
      Node("Add", {logit, current_}, {});
    }
    Node("Sigmoid", {current_}, {}, "click_probability");
    const std::vector<float> one = {1.0f};
    Initializer("one", onnx::TensorProto::kFloat, {1}, RawBytes(one));
    Node("Sub", {"one", "click_probability"}, {});
    Node("Concat", {current_, "click_probability"}, {IntAttribute("axis", 1)}, "probabilities");
    return Outputs(2);
  }

  // Softmax over the classes, as "probabilities"; then the graph's inputs
  // and outputs.
  ProtoWriter Finish(int64_t num_classes) {
    ToRows();
    Node("Softmax", {current_}, {IntAttribute("axis", 1)}, "probabilities");
    return Outputs(num_classes);
  }

 private:
  ProtoWriter Outputs(int64_t num_classes) {
    graph_.Bytes(onnx::GraphProto::kName, "pstrain");
    if (input_dim_ > 0)
      graph_.Message(onnx::GraphProto::kInput, BatchOfRows("features", input_dim_));
    if (click_fields_ > 0) {
      graph_.Message(onnx::GraphProto::kInput,
                     BatchOfRows("keys", click_fields_, onnx::TensorProto::kInt64));
    }
    graph_.Message(onnx::GraphProto::kOutput, BatchOfRows("probabilities", num_classes));
    return graph_;
  }

  static std::string_view FloatBytes(const ::pst::Tensor& t) {
    return {reinterpret_cast<const char*>(t.f32()), t.num_elements() * sizeof(float)};
  }

  // A constant of the graph: a float32 or int64 tensor of `dims` whose
  // little-endian bytes are `raw`.
  void Initializer(const std::string& name, onnx::TensorProto::DataType type,
                   const std::vector<int64_t>& dims, std::string_view raw) {
    ProtoWriter tensor;
    tensor.PackedInt64s(onnx::TensorProto::kDims, dims)
        .Varint(onnx::TensorProto::kDataType, type)
        .Bytes(onnx::TensorProto::kName, name)
        .Bytes(onnx::TensorProto::kRawData, raw);
    graph_.Message(onnx::GraphProto::kInitializer, tensor);
  }

  // Adds `op` reading `inputs`; its output (named `output`, or after the
  // op) is what the next node reads.
  void Node(const std::string& op, const std::vector<std::string>& inputs,
            const std::vector<ProtoWriter>& attributes, std::string output = "") {
    if (output.empty()) output = op + "_" + std::to_string(nodes_);
    ProtoWriter node;
    for (const std::string& in : inputs) node.Bytes(onnx::NodeProto::kInput, in);
    node.Bytes(onnx::NodeProto::kOutput, output)
        .Bytes(onnx::NodeProto::kName, output)
        .Bytes(onnx::NodeProto::kOpType, op);
    for (const ProtoWriter& a : attributes) node.Message(onnx::NodeProto::kAttribute, a);
    graph_.Message(onnx::GraphProto::kNode, node);
    current_ = output;
    ++nodes_;
  }

  // Rows of NHWC pixels as NCHW images of `image`'s input geometry.
  void ToImages(const Conv2DShape& image) {
    if (images_) return;
    const std::string shape = "shape_" + std::to_string(nodes_);
    const std::vector<int64_t> nhwc = {-1, image.height, image.width, image.in_channels};
    Initializer(shape, onnx::TensorProto::kInt64, {4}, RawBytes(nhwc));
    Node("Reshape", {current_, shape}, {});
    Node("Transpose", {current_}, {IntsAttribute("perm", {0, 3, 1, 2})});
    images_ = true;
  }

  // NCHW images as rows in NHWC order, as the dense layers read them.
  void ToRows() {
    if (!images_) return;
    Node("Transpose", {current_}, {IntsAttribute("perm", {0, 2, 3, 1})});
    Node("Flatten", {current_}, {IntAttribute("axis", 1)});
    images_ = false;
  }

  const int64_t input_dim_;
  ProtoWriter graph_;
  std::string current_ = "features";
  std::string dense_features_ = "features";  // standardized, once they are
  int64_t click_fields_ = 0;                 // a click model's "keys" per example
  bool images_ = false;
  int nodes_ = 0;
};

// The parameters of `trained` must be those of its layers, in order.
Status CheckParams(const std::vector<std::unique_ptr<Layer>>& layers, const TrainedModel& trained) {
  size_t next = 0;
  for (const auto& layer : layers) {
    for (const VariableSpec& v : layer->Variables()) {
      if (next >= trained.params.size() || trained.params[next].shape() != v.shape ||
          trained.params[next].dtype() != DType::kFloat32) {
        return InvalidArgument("the parameters do not fit model '" + ModelLabel(trained.model) +
                               "' at variable " + v.name);
      }
      ++next;
    }
  }
  if (next != trained.params.size()) {
    return InvalidArgument("model '" + ModelLabel(trained.model) + "' has " + std::to_string(next) +
                           " variables, not " + std::to_string(trained.params.size()));
  }
  return Status::OK();
}

// Layers as nodes, their parameters from params[first ...]; returns the
// index past them.
size_t WriteLayers(const std::vector<std::unique_ptr<Layer>>& layers,
                   const std::vector<::pst::Tensor>& params, size_t first, GraphWriter* graph) {
  size_t param = first;
  for (const auto& layer : layers) {
    const InferenceOp op = layer->Inference();
    const std::vector<VariableSpec> variables = layer->Variables();
    // Variables are "<layer>/weights" and "<layer>/bias", or a batchnorm's
    // "<layer>/gamma", "/beta", "/moving_mean" and "/moving_variance".
    const std::string name =
        variables.empty() ? "" : variables[0].name.substr(0, variables[0].name.rfind('/'));
    switch (op.kind) {
      case InferenceOp::Kind::kDense: graph->Dense(name, params[param], params[param + 1]); break;
      case InferenceOp::Kind::kConv2D:
        graph->Conv(name, op.image, params[param], params[param + 1]);
        break;
      case InferenceOp::Kind::kMaxPool2x2: graph->MaxPool2x2(op.image); break;
      case InferenceOp::Kind::kRelu: graph->Elementwise("Relu"); break;
      case InferenceOp::Kind::kSigmoid: graph->Elementwise("Sigmoid"); break;
      case InferenceOp::Kind::kIdentity: break;
      case InferenceOp::Kind::kBatchNorm:
        graph->BatchNormalization(name, op.image, op.epsilon, params[param], params[param + 1],
                                  params[param + 2], params[param + 3]);
        break;
    }
    param += variables.size();
  }
  return param;
}

// DCN-v2's cross layers on x0, the current tensor: x = x0 * (W x + b) + x,
// W a Gemm (full rank) or two (low rank).
void WriteCross(const CrossNetwork& cross, const std::vector<::pst::Tensor>& params, size_t first,
                GraphWriter* graph) {
  const std::string x0 = graph->current();
  std::string x = x0;
  size_t param = first;
  for (int l = 0; l < cross.layers(); ++l) {
    const std::string name = "cross" + std::to_string(l);
    graph->Use(x);
    if (cross.rank() == 0) {
      graph->Dense(name, params[param], params[param + 1]);
      param += 2;
    } else {
      graph->Dense(name + "/v", params[param], params[param + 1]);
      graph->Dense(name + "/u", params[param + 2], params[param + 3]);
      param += 4;
    }
    graph->Binary("Mul", x0, graph->current());
    graph->Binary("Add", graph->current(), x);
    x = graph->current();
  }
}

// InvalidArgument unless trained.params are the click model's variables
// and then its tables, each fixed table's [rows, dim] as the model lays
// them out.
Status CheckTables(const CtrModel& click, const TrainedModel& trained) {
  const size_t variables = click.variables().size();
  const std::vector<EmbeddingTableSpec>& tables = click.tables();
  bool fit = trained.params.size() == variables + tables.size();
  for (size_t t = 0; fit && t < tables.size(); ++t) {
    const ::pst::Tensor& rows = trained.params[variables + t];
    fit = rows.dtype() == DType::kFloat32 && rows.shape().size() == 2 &&
          rows.shape()[1] == tables[t].dim &&
          (tables[t].rows == 0 || rows.shape()[0] == tables[t].rows);
  }
  if (fit) return Status::OK();
  return InvalidArgument("the parameters do not fit click model '" + ModelLabel(trained.model) +
                         "'");
}

// The field vectors of a click model whose fields have different dims,
// each from its deep table (CtrModel::field_rows).
void WriteFieldEmbeddings(const CtrModel& click, const std::vector<::pst::Tensor>& params,
                          GraphWriter* graph) {
  const size_t variables = click.variables().size();
  const CtrModelConfig& config = click.config();
  std::vector<GraphWriter::DeepTable> tables;  // in the order of their first field
  std::map<int64_t, size_t> table_of;          // the model's table -> in tables
  std::vector<GraphWriter::FieldRows> fields;
  for (int f = 0; f < config.num_fields; ++f) {
    const CtrModel::FieldRows rows = click.field_rows(f);
    const auto [known, added] = table_of.emplace(rows.table, tables.size());
    if (added) tables.push_back({click.tables()[rows.table].name, &params[variables + rows.table]});
    fields.push_back(
        {known->second, rows.ranged, rows.ranged ? config.field_ranges[f] : KeyRange{}, rows.base});
  }
  graph->ClickFieldEmbeddings(config.table_rows, tables, fields);
}

// A click model with fixed tables: Mod, Gather and Reshape of the deep
// table's rows into the field vectors (with fields of different dims, each
// field's row of its own table: WriteFieldEmbeddings), its parts (cross
// layers, the dot interaction and its bottom MLP, the MLP, FM's term), and
// the wide table's Gather and ReduceSum added to the logit.
StatusOr<ProtoWriter> ClickGraph(const TrainedModel& trained) {
  if (trained.table_rows < 1) {
    return InvalidArgument(
        "a click model with dynamic tables does not export to ONNX (any 64-bit key has its own "
        "row): predict serves it");
  }
  PST_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, MakeTrainedModel(trained));
  const auto* click = dynamic_cast<const CtrModel*>(model.get());
  if (click == nullptr) return InvalidArgument(ModelLabel(trained.model) + " is no click model");
  PST_RETURN_IF_ERROR(CheckTables(*click, trained));
  const size_t variables = model->variables().size();
  GraphWriter graph(trained.input.size());
  if (trained.standardization) graph.Standardize(*trained.standardization);
  const CtrModelConfig& config = click->config();
  if (config.field_dims.empty()) {
    graph.ClickEmbedding(trained.num_fields, trained.table_rows, trained.params[variables]);
  } else {
    WriteFieldEmbeddings(*click, trained.params, &graph);
  }
  const CtrModel::Parts parts = click->parts();
  const std::vector<::pst::Tensor>& p = trained.params;
  if (parts.bottom != nullptr || config.dot) {
    std::string bottom;
    if (parts.bottom != nullptr) {
      graph.Use(graph.dense_features());
      WriteLayers(parts.bottom->layers(), p, parts.bottom_vars, &graph);
      bottom = graph.current();
    }
    graph.DotTerm(bottom, trained.num_fields, config.embedding_dim);
    if (!bottom.empty()) graph.Concat({bottom, "dots"});
  } else if (parts.cross != nullptr) {
    WriteCross(*parts.cross, p, parts.cross_vars, &graph);
  }
  if (parts.head != nullptr) {  // parallel: the MLP reads x0, the head both
    const std::string cross_out = graph.current();
    graph.Use(trained.input.size() > 0 ? "x0" : "embedded");
    WriteLayers(parts.mlp->layers(), p, parts.mlp_vars, &graph);
    graph.Concat({cross_out, graph.current()});
    WriteLayers(parts.head->layers(), p, parts.head_vars, &graph);
  } else {
    WriteLayers(parts.mlp->layers(), p, parts.mlp_vars, &graph);
  }
  if (config.fm) {
    const std::string logit = graph.current();
    graph.FmTerm(trained.num_fields, config.embedding_dim);
    graph.Binary("Add", logit, "fm");
  }
  // The wide table follows deep/embedding (model/ctr/ctr_model.h); other
  // deep tables, with fields of several dims, come after it.
  return graph.FinishClick(config.wide ? &trained.params[variables + 1] : nullptr);
}

StatusOr<ProtoWriter> LayerGraph(const TrainedModel& trained) {
  CpuKernels kernels;  // the layers only describe themselves
  PST_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Layer>> layers,
                       MakeLayers(trained.model, trained.input, trained.num_classes, kernels));
  PST_RETURN_IF_ERROR(CheckParams(layers, trained));

  GraphWriter graph(trained.input.size());
  if (trained.standardization) graph.Standardize(*trained.standardization);
  WriteLayers(layers, trained.params, 0, &graph);
  return graph.Finish(trained.num_classes);
}

}  // namespace

StatusOr<std::string> OnnxModel(const TrainedModel& trained) {
  PST_ASSIGN_OR_RETURN(ProtoWriter graph,
                       trained.click_model ? ClickGraph(trained) : LayerGraph(trained));
  ProtoWriter opset, model;
  opset.Bytes(onnx::OperatorSetIdProto::kDomain, "")
      .Varint(onnx::OperatorSetIdProto::kVersion, onnx::kOpsetVersion);
  model.Varint(onnx::ModelProto::kIrVersion, onnx::kIrVersion)
      .Bytes(onnx::ModelProto::kProducerName, "pstrain")
      .Bytes(onnx::ModelProto::kProducerVersion, PST_VERSION)
      .Bytes(onnx::ModelProto::kDocString, ModelLabel(trained.model) + " on " +
                                               trained.input.ToString() + ", " +
                                               std::to_string(trained.num_classes) + " classes")
      .Message(onnx::ModelProto::kGraph, graph)
      .Message(onnx::ModelProto::kOpsetImport, opset);
  return model.serialized();
}

Status WriteOnnxModel(const std::string& path, const TrainedModel& trained) {
  PST_ASSIGN_OR_RETURN(std::string bytes, OnnxModel(trained));
  return WriteFileAtomically(path, bytes);
}

}  // namespace pst
