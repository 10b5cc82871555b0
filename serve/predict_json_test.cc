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
  EXPECT_EQ(error("null"), "the body is a JSON null, not an object with \"format\" and \"lines\"");
  EXPECT_EQ(error(R"({"lines": ["1"]})"), "\"format\" is missing");
  EXPECT_EQ(error(R"({"format": ["criteo"], "lines": ["1"]})"),
            "\"format\" is a array, not a string");
  EXPECT_EQ(error(R"({"format": "Criteo", "lines": ["1"]})"),
            "unknown format \"Criteo\": give criteo, libsvm or libffm");
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
