#include "serve/predict_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pst {
namespace {

using Json = nlohmann::json;

TEST(PredictJsonTest, ReadsFormatAndLinesIgnoringOtherMembers) {
  StatusOr<PredictRequest> request =
      ParsePredictRequest(R"({"format": "libffm", "lines": ["1 0:1:1", "0\t2:3:1"], "id": 7})");
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->format, "libffm");
  EXPECT_EQ(request->lines, (std::vector<std::string>{"1 0:1:1", "0\t2:3:1"}));
}

TEST(PredictJsonTest, SaysWhatIsWrong) {
  auto error = [](const std::string& body) {
    const Status status = ParsePredictRequest(body).status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << body;
    return status.message();
  };
  EXPECT_NE(error(R"({"format": )").find("not valid JSON: parse error at line 1, column 12"),
            std::string::npos)
      << error(R"({"format": )");
  EXPECT_EQ(error("null"),
            "the body is a JSON null, not an object with \"format\" and \"lines\" (or "
            "\"examples\")");
  EXPECT_EQ(error(R"({"lines": ["1"]})"), "\"format\" is missing");
  EXPECT_EQ(error(R"({"format": ["criteo"], "lines": ["1"]})"),
            "\"format\" is a array, not a string");
  EXPECT_EQ(error(R"({"format": "Criteo", "lines": ["1"]})"),
            "unknown format \"Criteo\": give criteo, libsvm, libffm or fields");
  EXPECT_EQ(error(R"({"format": "libsvm"})"), "\"lines\" is missing");
  EXPECT_EQ(error(R"({"format": "libsvm", "lines": {}})"),
            "\"lines\" is a object, not an array of strings");
  EXPECT_EQ(error(R"({"format": "libsvm", "lines": []})"),
            "\"lines\" is empty: give one line or more");
  EXPECT_EQ(error(R"({"format": "libsvm", "lines": ["1", null]})"),
            "line 2 is a null, not a string");
  EXPECT_NE(error("{\"format\": \"libsvm\", \"lines\": [\"\xff\"]}").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error(std::string(200000, '[')).find("not valid JSON"), std::string::npos);
}

TEST(PredictJsonTest, ReadsNamedFieldsOfEveryType) {
  StatusOr<PredictRequest> request = ParsePredictRequest(R"({"format": "fields", "examples": [
      {"I1": 3, "I2": -4, "I3": null, "C1": "68fd1e64", "genres": [5, [7, 0.25]], "none": []},
      {}]})");
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->format, "fields");
  EXPECT_TRUE(request->lines.empty());
  ASSERT_EQ(request->examples.size(), 2u);
  const NamedExample& first = request->examples[0];
  EXPECT_EQ(first.size(), 6u);
  EXPECT_EQ(first.at("I1").type, FieldValue::Type::kInteger);
  EXPECT_EQ(first.at("I1").integer, 3);
  EXPECT_EQ(first.at("I2").integer, -4);
  EXPECT_EQ(first.at("I3").type, FieldValue::Type::kNull);
  EXPECT_EQ(first.at("C1").type, FieldValue::Type::kString);
  EXPECT_EQ(first.at("C1").text, "68fd1e64");
  const FieldValue& genres = first.at("genres");
  EXPECT_EQ(genres.type, FieldValue::Type::kEntries);
  ASSERT_EQ(genres.entries.size(), 2u);
  EXPECT_EQ(genres.entries[0].id, 5);
  EXPECT_EQ(genres.entries[0].weight, 1.0f);
  EXPECT_EQ(genres.entries[1].id, 7);
  EXPECT_EQ(genres.entries[1].weight, 0.25f);
  EXPECT_EQ(first.at("none").type, FieldValue::Type::kEntries);
  EXPECT_TRUE(first.at("none").entries.empty());
  EXPECT_TRUE(request->examples[1].empty());
}

TEST(PredictJsonTest, SaysWhatIsWrongWithNamedFields) {
  auto error = [](const std::string& examples) {
    const std::string body = R"({"format": "fields", "examples": )" + examples + "}";
    const Status status = ParsePredictRequest(body).status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << body;
    return status.message();
  };
  EXPECT_EQ(ParsePredictRequest(R"({"format": "fields"})").status().message(),
            "\"examples\" is missing");
  EXPECT_EQ(error(R"({"I1": 3})"), "\"examples\" is a object, not an array of objects");
  EXPECT_EQ(error("[]"), "\"examples\" is empty: give one example or more");
  EXPECT_EQ(error(R"([{}, "0\t1"])"), "example 2 is a string, not an object of named fields");
  EXPECT_EQ(error(R"([{"I1": 3.5}])"), "example 1: field \"I1\": 3.5 is not an integer");
  EXPECT_EQ(error(R"([{"I1": true}])"),
            "example 1: field \"I1\": a boolean: give null, an integer, a string, or a list of "
            "ids or [id, weight]");
  EXPECT_EQ(error(R"([{"I1": 18446744073709551615}])"),
            "example 1: field \"I1\": 18446744073709551615 is over the largest 64-bit integer");
  EXPECT_EQ(error(R"([{"g": [1, -2]}])"),
            "example 1: field \"g\": entry 2: -2 is no id (an integer >= 0) nor [id, weight]");
  EXPECT_EQ(error(R"([{"g": [[1, "x"]]}])"),
            "example 1: field \"g\": entry 1: weight \"x\" is not a finite float");
  EXPECT_EQ(error(R"([{"g": [[1, 1e300]]}])"),
            "example 1: field \"g\": entry 1: weight 1e+300 is not a finite float");
  EXPECT_EQ(error(R"([{"g": [[1, 2, 3]]}])"),
            "example 1: field \"g\": entry 1: [1,2,3] is no id (an integer >= 0) nor [id, weight]");
}

TEST(PredictJsonTest, AnswersRoundTripEveryFloat) {
  const std::vector<float> p = {0.1f, 1e-30f, 0.99999994f, 0.5f};
  const Json answer = Json::parse(PredictAnswerJson(p, 1250, 1200));
  EXPECT_EQ(answer["model_step"], 1250);
  EXPECT_EQ(answer["base_step"], 1200);
  const std::vector<double> got = answer["probabilities"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), p.size());
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(static_cast<float>(got[i]), p[i]);
}

TEST(PredictJsonTest, ErrorsAreJsonEvenForBytesThatAreNoUtf8) {
  EXPECT_EQ(ErrorJson("line 2: bad"), R"({"error":"line 2: bad"})");
  const Json error = Json::parse(ErrorJson("label '\xc3"));
  EXPECT_EQ(error["error"], "label '\xef\xbf\xbd");  // U+FFFD
}

}  // namespace
}  // namespace pst
