#include "export/onnx_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "job/model_file.h"
#include "model/zoo/model_zoo.h"

// The graph's numbers (that ONNX Runtime computes what predict does) are
// checked by tests/integration/onnx_runtime_test.cc; this checks its shape.
namespace pst {
namespace {

// A protobuf message's fields: length-delimited ones as bytes, varints as
// numbers, 32-bit ones as their bits, each in the order they appear.
struct Fields {
  std::multimap<int, std::string> bytes;
  std::multimap<int, uint64_t> varints;
  std::multimap<int, uint32_t> fixed32s;

  std::vector<std::string> All(int field) const {
    std::vector<std::string> out;
    for (auto [it, end] = bytes.equal_range(field); it != end; ++it) out.push_back(it->second);
    return out;
  }
  std::string One(int field) const { return All(field).at(0); }
};

uint64_t ReadVarint(std::string_view* in) {
  uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
}

Fields Decode(std::string_view in) {
  Fields fields;
  while (!in.empty()) {
    const uint64_t tag = ReadVarint(&in);
    const int field = static_cast<int>(tag >> 3);
    switch (tag & 7) {
      case 0: fields.varints.emplace(field, ReadVarint(&in)); break;
      case 2: {
        const uint64_t n = ReadVarint(&in);
        fields.bytes.emplace(field, std::string(in.substr(0, n)));
        in.remove_prefix(n);
        break;
      }
      case 5: {
        uint32_t bits = 0;
        for (int i = 3; i >= 0; --i) bits = bits << 8 | static_cast<unsigned char>(in[i]);
        fields.fixed32s.emplace(field, bits);
        in.remove_prefix(4);
        break;
      }
      default: ADD_FAILURE() << "unexpected wire type " << (tag & 7); return fields;
    }
  }
  return fields;
}

// A `name` model with recognisable parameter values.
TrainedModel Trained(const std::string& name, const InputShape& input, int classes) {
  TrainedModel trained;
  trained.model = name;
  trained.input = input;
  trained.num_classes = classes;
  const std::unique_ptr<Model> model = MakeModel(name, input, classes).value();
  for (const VariableSpec& v : model->variables()) {
    Tensor t(DType::kFloat32, v.shape);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = static_cast<float>(i);
    trained.params.push_back(t);
  }
  return trained;
}

Fields Graph(const TrainedModel& trained) {
  StatusOr<std::string> model = OnnxModel(trained);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return Decode(Decode(model.ok() ? *model : "").One(7));
}

std::vector<std::string> OpTypes(const Fields& graph) {
  std::vector<std::string> ops;
  for (const std::string& node : graph.All(1)) ops.push_back(Decode(node).One(4));
  return ops;
}

const std::string* Initializer(const Fields& graph, const std::string& name,
                               std::vector<int64_t>* dims) {
  static std::string raw;
  for (const std::string& tensor : graph.All(5)) {
    const Fields t = Decode(tensor);
    if (t.One(8) != name) continue;
    const std::string dims_bytes = t.One(1);
    std::string_view packed = dims_bytes;
    dims->clear();
    while (!packed.empty()) dims->push_back(static_cast<int64_t>(ReadVarint(&packed)));
    raw = t.One(9);
    return &raw;
  }
  return nullptr;
}

TEST(OnnxExportTest, ModelHeaderNamesIrVersionOpsetAndProducer) {
  StatusOr<std::string> bytes = OnnxModel(Trained("mlp", 20, 3));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const Fields model = Decode(*bytes);
  EXPECT_EQ(model.varints.find(1)->second, 7u);  // ir_version
  EXPECT_EQ(model.One(2), "pstrain");
  const Fields opset = Decode(model.One(8));
  EXPECT_EQ(opset.One(1), "");
  EXPECT_EQ(opset.varints.find(2)->second, 13u);
}

TEST(OnnxExportTest, MlpsAreGemmsWithTheirActivationsThenSoftmax) {
  EXPECT_EQ(OpTypes(Graph(Trained("mlp", 20, 3))),
            (std::vector<std::string>{"Gemm", "Sigmoid", "Gemm", "Softmax"}));
  TrainedModel standardized = Trained("mlp_relu", 20, 3);
  standardized.standardization =
      Standardization{std::vector<float>(20, 1.0f), std::vector<float>(20, 2.0f)};
  EXPECT_EQ(
      OpTypes(Graph(standardized)),
      (std::vector<std::string>{"Sub", "Mul", "Gemm", "Relu", "Gemm", "Relu", "Gemm", "Softmax"}));
}

TEST(OnnxExportTest, CnnGoesToNchwForTheConvolutionsAndBackBeforeDense) {
  const Fields graph = Graph(Trained("cnn", InputShape({28, 28, 1}), 10));
  EXPECT_EQ(OpTypes(graph),
            (std::vector<std::string>{"Reshape", "Transpose", "Conv", "Relu", "MaxPool", "Conv",
                                      "Relu", "MaxPool", "Transpose", "Flatten", "Gemm", "Relu",
                                      "Gemm", "Softmax"}));
  // The inputs and outputs: "features" [batch, 784], "probabilities" [batch, 10].
  EXPECT_NE(graph.One(11).find("features"), std::string::npos);
  EXPECT_NE(graph.One(12).find("probabilities"), std::string::npos);
}

TEST(OnnxExportTest, FiltersAreStoredOihw) {
  // conv0 of a cnn on 8x8x3: (R,S,C,K) = (5,5,3,20) holding its own index.
  const Fields graph = Graph(Trained("cnn", InputShape({8, 8, 3}), 4));
  std::vector<int64_t> dims;
  const std::string* raw = Initializer(graph, "conv0/weights", &dims);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{20, 3, 5, 5}));
  ASSERT_EQ(raw->size(), 20u * 3 * 5 * 5 * sizeof(float));
  std::vector<float> oihw(raw->size() / sizeof(float));
  std::memcpy(oihw.data(), raw->data(), raw->size());
  for (int k : {0, 7, 19})
    for (int c : {0, 2})
      for (int r : {0, 4})
        for (int s : {1, 3}) {
          EXPECT_EQ(oihw[((k * 3 + c) * 5 + r) * 5 + s], ((r * 5 + s) * 3 + c) * 20 + k)
              << k << c << r << s;
        }
}

TEST(OnnxExportTest, SpecDropoutIsLeftOutAndAPoolOnTheInputReshapesFirst) {
  const std::string spec = "maxpool 2\ndense 6 relu\ndropout 0.5\ndense classes\n";
  EXPECT_EQ(OpTypes(Graph(Trained(SpecModelName(spec), InputShape({4, 4, 2}), 3))),
            (std::vector<std::string>{"Reshape", "Transpose", "MaxPool", "Transpose", "Flatten",
                                      "Gemm", "Relu", "Gemm", "Softmax"}));
}

// The float values of a float32 initializer's raw bytes.
std::vector<float> Floats(const std::string& raw) {
  std::vector<float> values(raw.size() / sizeof(float));
  std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

TEST(OnnxExportTest, BatchNormsAreBatchNormalizationsOnNchwImagesOrOnRowsOfFeatures) {
  const std::string spec =
      "conv 3x3 4 same\nbatchnorm relu\nmaxpool 2\ndense 6\nbatchnorm momentum 0.9 sigmoid\n"
      "dense classes\n";
  TrainedModel trained = Trained(SpecModelName(spec), InputShape({4, 4, 2}), 3);
  // A negative moving variance (a stale async delta) is exported as 0.
  const std::unique_ptr<Model> model = MakeModel(trained.model, trained.input, 3).value();
  for (size_t i = 0; i < model->variables().size(); ++i) {
    if (model->variables()[i].name == "batchnorm1/moving_variance") trained.params[i].f32()[1] = -2;
  }
  const Fields graph = Graph(trained);
  // batchnorm0 reads the convolution's NCHW images (channels on axis 1),
  // batchnorm1 the dense layer's [batch, 6] rows.
  EXPECT_EQ(OpTypes(graph),
            (std::vector<std::string>{"Reshape", "Transpose", "Conv", "BatchNormalization", "Relu",
                                      "MaxPool", "Transpose", "Flatten", "Gemm",
                                      "BatchNormalization", "Sigmoid", "Gemm", "Softmax"}));
  const std::vector<std::string> nodes = graph.All(1);
  for (const auto& [index, layer, after] :
       {std::tuple<int, std::string, int>{3, "batchnorm0", 2},
        std::tuple<int, std::string, int>{9, "batchnorm1", 8}}) {
    const Fields node = Decode(nodes[index]);
    EXPECT_EQ(node.All(1), (std::vector<std::string>{Decode(nodes[after]).One(2), layer + "/gamma",
                                                     layer + "/beta", layer + "/moving_mean",
                                                     layer + "/moving_variance"}))
        << layer;
    const Fields epsilon = Decode(node.One(5));
    EXPECT_EQ(epsilon.One(1), "epsilon");
    EXPECT_EQ(epsilon.varints.find(20)->second, 1u);  // FLOAT
    uint32_t bits = epsilon.fixed32s.find(2)->second;
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    EXPECT_EQ(value, 1e-3f) << layer;
  }
  // The initializers hold the variables' values: C = 4, then 6.
  std::vector<int64_t> dims;
  const std::string* gamma = Initializer(graph, "batchnorm0/gamma", &dims);
  ASSERT_NE(gamma, nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(Floats(*gamma), (std::vector<float>{0, 1, 2, 3}));
  const std::string* mean = Initializer(graph, "batchnorm1/moving_mean", &dims);
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{6}));
  EXPECT_EQ(Floats(*mean), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  const std::string* variance = Initializer(graph, "batchnorm1/moving_variance", &dims);
  ASSERT_NE(variance, nullptr);
  EXPECT_EQ(Floats(*variance), (std::vector<float>{0, 0, 2, 3, 4, 5}));
}

TEST(OnnxExportTest, ABatchNormOnTheInputMakesImagesOfPixelsButNotOfFeatures) {
  const std::string spec = "batchnorm\ndense classes\n";
  EXPECT_EQ(OpTypes(Graph(Trained(SpecModelName(spec), InputShape({4, 4, 2}), 3))),
            (std::vector<std::string>{"Reshape", "Transpose", "BatchNormalization", "Transpose",
                                      "Flatten", "Gemm", "Softmax"}));
  EXPECT_EQ(OpTypes(Graph(Trained(SpecModelName(spec), 20, 3))),
            (std::vector<std::string>{"BatchNormalization", "Gemm", "Softmax"}));
}

TEST(OnnxExportTest, ParametersThatDoNotFitTheModelAreRefused) {
  TrainedModel trained = Trained("mlp", 20, 3);
  trained.params[0] = Tensor(DType::kFloat32, {21, 100});
  StatusOr<std::string> wrong_shape = OnnxModel(trained);
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.status().message().find("dense0/weights"), std::string::npos)
      << wrong_shape.status().ToString();
  trained = Trained("mlp", 20, 3);
  trained.params.pop_back();
  EXPECT_FALSE(OnnxModel(trained).ok());
}

// A click model (wide_deep unless named) on 13 dense features and 26
// fields, tables of `table_rows` rows.
TrainedModel ClickTrained(int64_t table_rows, const std::string& name = "wide_deep") {
  TrainedModel trained;
  trained.model = name;
  trained.input = 13;
  trained.num_classes = 2;
  trained.click_model = true;
  trained.num_fields = 26;
  trained.table_rows = table_rows;
  const std::unique_ptr<Model> model = MakeTrainedModel(trained).value();
  for (const VariableSpec& v : model->variables()) trained.params.emplace_back(v.dtype, v.shape);
  for (const EmbeddingTableSpec& t : model->tables()) {
    trained.params.emplace_back(DType::kFloat32, Shape{std::max<int64_t>(table_rows, 1), t.dim});
  }
  return trained;
}

// The numbers (ONNX Runtime against predict --output, 2000 examples of the
// generated click log: 1.2e-7 at most) were checked by hand; this checks
// the graph's shape.
TEST(OnnxExportTest, AClickModelGathersItsRowsByKeyModRowsAndAddsTheWideSum) {
  const Fields graph = Graph(ClickTrained(1000));
  EXPECT_EQ(OpTypes(graph),
            (std::vector<std::string>{"Mod", "Gather", "Reshape", "Concat", "Gemm", "Relu", "Gemm",
                                      "Relu", "Gemm", "Gather", "ReduceSum", "Add", "Sigmoid",
                                      "Sub", "Concat"}));
  std::vector<int64_t> dims;
  const std::string* rows = Initializer(graph, "table_rows", &dims);
  ASSERT_NE(rows, nullptr);
  int64_t modulus = 0;
  std::memcpy(&modulus, rows->data(), sizeof modulus);
  EXPECT_EQ(modulus, 1000);
  ASSERT_NE(Initializer(graph, "deep/embedding", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{1000, 8}));
  ASSERT_NE(Initializer(graph, "wide/weights", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{1000, 1}));
  // Inputs: the dense features (float) and one int64 key per field.
  const std::vector<std::string> inputs = graph.All(11);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(Decode(inputs[0]).One(1), "features");
  EXPECT_EQ(Decode(inputs[1]).One(1), "keys");
  const Fields key_type = Decode(Decode(Decode(inputs[1]).One(2)).One(1));
  EXPECT_EQ(key_type.varints.find(1)->second, 7u);  // int64
}

// The parts of the other click models, node by node after the embedding
// (their numbers: onnx_runtime_test's ClickModelsOnCriteoMatchPredict).
TEST(OnnxExportTest, DeepFmAddsFmsTermToTheMlpsLogit) {
  const std::vector<std::string> ops = OpTypes(Graph(ClickTrained(1000, "deepfm")));
  const std::vector<std::string> after_mlp(ops.begin() + 9, ops.begin() + 19);
  EXPECT_EQ(after_mlp, (std::vector<std::string>{"Reshape", "ReduceSum", "Mul", "ReduceSum", "Mul",
                                                 "ReduceSum", "Sub", "Mul", "Add", "Gather"}))
      << ::testing::PrintToString(ops);
}

TEST(OnnxExportTest, DcnV2CrossesX0WithEachLayersGemm) {
  const std::vector<std::string> ops = OpTypes(Graph(ClickTrained(1000, "dcn_v2")));
  const std::vector<std::string> cross(ops.begin() + 4, ops.begin() + 13);
  EXPECT_EQ(cross, (std::vector<std::string>{"Gemm", "Mul", "Add", "Gemm", "Mul", "Add", "Gemm",
                                             "Mul", "Add"}))
      << ::testing::PrintToString(ops);
}

TEST(OnnxExportTest, DlrmTakesTheUpperTriangleOfItsVectorsDotProducts) {
  const Fields graph = Graph(ClickTrained(1000, "dlrm"));
  const std::vector<std::string> ops = OpTypes(graph);
  // Bottom 13 -> 64 -> 16 from the features, then the 27 vectors' dots.
  const std::vector<std::string> dot(ops.begin() + 8, ops.begin() + 17);
  EXPECT_EQ(dot, (std::vector<std::string>{"Reshape", "Reshape", "Concat", "Transpose", "MatMul",
                                           "Reshape", "Gather", "Concat", "Gemm"}))
      << ::testing::PrintToString(ops);
  std::vector<int64_t> dims;
  const std::string* pairs = Initializer(graph, "dot/pairs", &dims);
  ASSERT_NE(pairs, nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{27 * 26 / 2}));
  int64_t first[2];
  std::memcpy(first, pairs->data(), sizeof first);
  EXPECT_EQ(first[0], 1);  // (0, 1) of the 27 x 27 products, flattened
  EXPECT_EQ(first[1], 2);
}

// A click model (wide_deep unless named) on 13 dense features and 3 fields
// of dims 8, 4, 8 over tables of 100 key rows: fields 0 and 2 (ranges [0,
// 50) and [80, 100)) in deep/embedding, rows 0.. and 50..; field 1 ([50,
// 80)) in deep/embedding_dim4, rows 0...
TrainedModel MixedDimsTrained(const std::string& name = "wide_deep") {
  TrainedModel trained;
  trained.model = name;
  trained.input = 13;
  trained.num_classes = 2;
  trained.click_model = true;
  trained.num_fields = 3;
  trained.table_rows = 100;
  trained.field_dims = {8, 4, 8};
  trained.field_ranges = {{0, 50}, {50, 30}, {80, 20}};
  const std::unique_ptr<Model> model = MakeTrainedModel(trained).value();
  for (const VariableSpec& v : model->variables()) trained.params.emplace_back(v.dtype, v.shape);
  for (const EmbeddingTableSpec& t : model->tables()) {
    trained.params.emplace_back(DType::kFloat32, Shape{t.rows, t.dim});
  }
  return trained;
}

std::vector<int64_t> Int64s(const Fields& graph, const std::string& name) {
  std::vector<int64_t> dims;
  const std::string* raw = Initializer(graph, name, &dims);
  if (raw == nullptr) return {};
  std::vector<int64_t> values(raw->size() / sizeof(int64_t));
  std::memcpy(values.data(), raw->data(), raw->size());
  return values;
}

// Each field's row of its own table as CtrModel::DeepRow finds it
// (base + (id - offset) mod range rows), Gathered field by field and
// side by side in field order; the wide table reads the keys' row ids.
TEST(OnnxExportTest, FieldsOfSeveralDimsGatherTheirRowsFromTheirOwnTables) {
  const Fields graph = Graph(MixedDimsTrained());
  EXPECT_EQ(OpTypes(graph),
            (std::vector<std::string>{
                "Mod",    "Sub",    "Mod",       "Add",    "Gather",  "Gather", "Gather", "Gather",
                "Gather", "Gather", "Concat",    "Concat", "Gemm",    "Relu",   "Gemm",   "Relu",
                "Gemm",   "Gather", "ReduceSum", "Add",    "Sigmoid", "Sub",    "Concat"}));
  EXPECT_EQ(Int64s(graph, "table_rows"), (std::vector<int64_t>{100}));
  EXPECT_EQ(Int64s(graph, "field_offsets"), (std::vector<int64_t>{0, 50, 80}));
  EXPECT_EQ(Int64s(graph, "field_rows"), (std::vector<int64_t>{50, 30, 20}));
  EXPECT_EQ(Int64s(graph, "field_bases"), (std::vector<int64_t>{0, 0, 50}));
  std::vector<int64_t> dims;
  ASSERT_NE(Initializer(graph, "deep/embedding", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{70, 8}));
  ASSERT_NE(Initializer(graph, "deep/embedding_dim4", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{30, 4}));
  ASSERT_NE(Initializer(graph, "wide/weights", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{100, 1}));
  // Field 1 reads deep/embedding_dim4; the vectors meet in field order.
  const std::vector<std::string> nodes = graph.All(1);
  EXPECT_EQ(Decode(nodes[7]).All(1), (std::vector<std::string>{"deep/embedding_dim4", "Gather_6"}));
  EXPECT_EQ(Decode(nodes[10]).All(1),
            (std::vector<std::string>{"Gather_5", "Gather_7", "Gather_9"}));
}

// dcn_v2 has no wide table: its second table is deep/embedding_dim4, which
// the logit does not read.
TEST(OnnxExportTest, FieldsOfSeveralDimsWithoutAWideTableAddNothingToTheLogit) {
  const Fields graph = Graph(MixedDimsTrained("dcn_v2"));
  const std::vector<std::string> ops = OpTypes(graph);
  const std::vector<std::string> last(ops.end() - 5, ops.end());
  EXPECT_EQ(last, (std::vector<std::string>{"Relu", "Gemm", "Sigmoid", "Sub", "Concat"}))
      << ::testing::PrintToString(ops);
  std::vector<int64_t> dims;
  EXPECT_EQ(Initializer(graph, "wide/weights", &dims), nullptr);
  ASSERT_NE(Initializer(graph, "deep/embedding_dim4", &dims), nullptr);
  EXPECT_EQ(dims, (std::vector<int64_t>{30, 4}));
}

TEST(OnnxExportTest, TablesOfOtherShapesThanTheModelsAreRefused) {
  TrainedModel trained = MixedDimsTrained();
  trained.params.back() = Tensor(DType::kFloat32, {31, 4});
  EXPECT_FALSE(OnnxModel(trained).ok());
}

TEST(OnnxExportTest, AClickModelWithDynamicTablesIsRefused) {
  StatusOr<std::string> dynamic = OnnxModel(ClickTrained(0));
  ASSERT_FALSE(dynamic.ok());
  EXPECT_NE(dynamic.status().message().find("predict serves it"), std::string::npos)
      << dynamic.status().ToString();
}

TEST(OnnxExportTest, AnUnwritablePathIsAnErrorNamingIt) {
  const std::string path = "/nonexistent-dir-" + std::to_string(getpid()) + "/model.onnx";
  const Status written = WriteOnnxModel(path, Trained("mlp", 20, 3));
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.ToString().find(path), std::string::npos) << written.ToString();
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace pst
