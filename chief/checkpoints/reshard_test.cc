// ReshardParts on parts laid out as a ps writes them (docs/FORMATS.md): a
// partitioned variable, a whole one, the global step and a table, cut from 2
// ps to 3, 1 and back to 2; and what it refuses.
#include "chief/checkpoints/reshard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

namespace pst {
namespace {

constexpr int64_t kDim = 2;
constexpr int64_t kSlotFloats = 2 * kDim;  // e.g. Adam's m and v

Placement PlacementOver(int shards) {
  PlacementOptions options;
  options.num_shards = shards;
  options.partition_bytes = 16;  // w [5,2]: 40 B in 3 slices of 2, 2 and 1 rows
  return Placement::Compute(
             WithGlobalStep({{"w", DType::kFloat32, {5, kDim}}, {"b", DType::kFloat32, {3}}}),
             options, {{"t", kDim, 10}})
      .value();
}

Tensor Scalar(int64_t v) {
  Tensor t(DType::kInt64, {});
  t.i64()[0] = v;
  return t;
}

// A float tensor of `shape` holding base, base + 1, ...
Tensor Counting(const Shape& shape, float base) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = base + static_cast<float>(i);
  return t;
}

// What 2 ps hold: every variable at version 7 (updates 6), "w" and "b" with
// slots m and v, the table's rows {0, 3, 4, 7, 9} and the sync step 7.
std::vector<NamedTensors> TwoPsParts() {
  const Placement placement = PlacementOver(2);
  std::vector<NamedTensors> parts(2);
  const std::vector<Tensor> values = {Scalar(7), Counting({5, kDim}, 0), Counting({3}, 100)};
  for (const Slice& s : placement.slices()) {
    NamedTensors& part = parts[s.shard];
    part.emplace_back(s.name, ExtractRows(s, values[s.variable]));
    part.emplace_back(s.name + "@version", Scalar(7));
    part.emplace_back(s.name + "@updates", Scalar(6));
    if (s.dtype == DType::kFloat32) {
      part.emplace_back(s.name + "@slot/m",
                        ExtractRows(s, Counting(values[s.variable].shape(), 1000)));
      part.emplace_back(s.name + "@slot/v",
                        ExtractRows(s, Counting(values[s.variable].shape(), 2000)));
    }
  }
  const std::vector<std::vector<int64_t>> ids = {{0, 4}, {3, 7, 9}};
  for (int k = 0; k < 2; ++k) {
    const int64_t n = static_cast<int64_t>(ids[k].size());
    Tensor id_tensor(DType::kInt64, {n}), versions(DType::kInt64, {n});
    Tensor rows(DType::kFloat32, {n, kDim}), slots(DType::kFloat32, {n, kSlotFloats});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = ids[k][i];
      id_tensor.i64()[i] = id;
      versions.i64()[i] = id + 1;
      for (int64_t d = 0; d < kDim; ++d) rows.f32()[i * kDim + d] = 10.0f * id + d;
      for (int64_t d = 0; d < kSlotFloats; ++d) slots.f32()[i * kSlotFloats + d] = -10.0f * id - d;
    }
    parts[k].emplace_back("t@ids", id_tensor);
    parts[k].emplace_back("t@rows", rows);
    parts[k].emplace_back("t@slots", slots);
    parts[k].emplace_back("t@row_versions", versions);
    parts[k].emplace_back("t@applies", Scalar(5 + k));
    parts[k].emplace_back("@sync_step", Scalar(7));
  }
  return parts;
}

// Each tensor's name, dtype, shape and bytes, over every part.
std::map<std::string, std::string> Contents(const std::vector<NamedTensors>& parts) {
  std::map<std::string, std::string> out;
  for (size_t k = 0; k < parts.size(); ++k) {
    for (const auto& [name, t] : parts[k]) {
      const std::string key = name[0] == '@' || name.rfind("t@", 0) == 0
                                  ? "ps-" + std::to_string(k) + ":" + name
                                  : name;
      out[key] = std::string(DTypeName(t.dtype())) + ShapeToString(t.shape()) +
                 std::string(static_cast<const char*>(t.data()), t.num_bytes());
    }
  }
  return out;
}

const Tensor* Named(const NamedTensors& part, const std::string& name) {
  for (const auto& [n, t] : part) {
    if (n == name) return &t;
  }
  return nullptr;
}

TEST(ReshardTest, TwoPsToThreeToOneAndBackToTwoIsBitIdentical) {
  const std::vector<NamedTensors> two = TwoPsParts();
  auto three = ReshardParts(two, PlacementOver(2), PlacementOver(3));
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  auto one = ReshardParts(*three, PlacementOver(3), PlacementOver(1));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  auto back = ReshardParts(*one, PlacementOver(1), PlacementOver(2));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // The table's apply counts become the largest (6) on every shard.
  std::vector<NamedTensors> expected = two;
  for (auto& [name, t] : expected[0]) {
    if (name == "t@applies") t = Scalar(6);
  }
  EXPECT_EQ(Contents(*back), Contents(expected));
}

TEST(ReshardTest, EachSliceAndRowGoesWhereTheNewPlacementPutsIt) {
  const Placement three = PlacementOver(3);
  auto parts = ReshardParts(TwoPsParts(), PlacementOver(2), three);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 3u);
  const Tensor w = Counting({5, kDim}, 0);
  for (const Slice& s : three.slices()) {
    if (s.variable != 1) continue;  // "w"
    const Tensor* slice = Named((*parts)[s.shard], s.name);
    ASSERT_NE(slice, nullptr) << s.name << " on ps-" << s.shard;
    EXPECT_EQ(std::memcmp(slice->data(), ExtractRows(s, w).data(), s.num_bytes()), 0) << s.name;
  }
  const std::vector<std::vector<int64_t>> ids = {{0, 3, 9}, {4, 7}, {}};  // id mod 3
  for (int k = 0; k < 3; ++k) {
    const Tensor* t = Named((*parts)[k], "t@ids");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(std::vector<int64_t>(t->i64(), t->i64() + t->num_elements()), ids[k]) << k;
    const Tensor* rows = Named((*parts)[k], "t@rows");
    for (size_t i = 0; i < ids[k].size(); ++i) {
      EXPECT_EQ(rows->f32()[i * kDim + 1], 10.0f * ids[k][i] + 1);
    }
    EXPECT_EQ(Named((*parts)[k], "@sync_step")->i64()[0], 7);
  }
  EXPECT_EQ(Named((*parts)[2], "t@slots")->shape(), (Shape{0, kSlotFloats}));
}

TEST(ReshardTest, ASliceTakesTheLargestVersionOfTheSlicesItJoins) {
  std::vector<NamedTensors> two = TwoPsParts();
  for (NamedTensors& part : two) {
    for (auto& [name, t] : part) {
      if (name == "w/part_1@version") t = Scalar(9);
    }
  }
  auto one = ReshardParts(two, PlacementOver(2), PlacementOver(1));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(Named((*one)[0], "w/part_0@version")->i64()[0], 7);  // rows 0-1: part_0 alone
  EXPECT_EQ(Named((*one)[0], "w/part_1@version")->i64()[0], 9);
  EXPECT_EQ(Named((*one)[0], "b@version")->i64()[0], 7);
}

TEST(ReshardTest, AMissingOrMisshapenTensorIsDataLossNamingIt) {
  std::vector<NamedTensors> missing = TwoPsParts();
  for (NamedTensors& part : missing) {
    part.erase(std::remove_if(part.begin(), part.end(),
                              [](const auto& named) { return named.first == "w/part_1@slot/v"; }),
               part.end());
  }
  auto result = ReshardParts(missing, PlacementOver(2), PlacementOver(3));
  EXPECT_EQ(result.status().code(), Code::kDataLoss);
  EXPECT_NE(result.status().message().find("'w/part_1@slot/v'"), std::string::npos)
      << result.status().ToString();

  std::vector<NamedTensors> misshapen = TwoPsParts();
  for (NamedTensors& part : misshapen) {
    for (auto& [name, t] : part) {
      if (name == "t@rows" && t.shape()[0] > 0) t = Tensor(DType::kFloat32, {t.shape()[0], 3});
    }
  }
  result = ReshardParts(misshapen, PlacementOver(2), PlacementOver(3));
  EXPECT_EQ(result.status().code(), Code::kDataLoss);
  EXPECT_NE(result.status().message().find("'t@rows'"), std::string::npos)
      << result.status().ToString();
}

TEST(ReshardTest, TheWrongNumberOfPartsOrAnotherModelIsRefused) {
  std::vector<NamedTensors> two = TwoPsParts();
  EXPECT_EQ(ReshardParts({two[0]}, PlacementOver(2), PlacementOver(3)).status().code(),
            Code::kInvalidArgument);
  const Placement other =
      Placement::Compute(WithGlobalStep({{"w", DType::kFloat32, {6, kDim}}}), {3}).value();
  EXPECT_EQ(ReshardParts(two, PlacementOver(2), other).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
