#include "serve/request_handler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "predict/predictor.h"
#include "serve/testing/click_models.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class RequestHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("serve_handler_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    WriteLines(Path("train.txt"), CriteoLines(40));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  HttpResponse Post(const std::string& body, const std::string& content_type = "application/json") {
    return handler_.Handle({"POST", "/predict", content_type, body, false});
  }
  static std::string Body(const std::string& format, const std::vector<std::string>& lines) {
    return Json{{"format", format}, {"lines", lines}}.dump();
  }
  // The answer's status and its "error" text.
  void ExpectError(const HttpResponse& response, int status, const std::string& part) {
    EXPECT_EQ(response.status, status) << response.body;
    EXPECT_EQ(response.content_type, "application/json");
    const Json json = Json::parse(response.body);
    ASSERT_TRUE(json.contains("error")) << response.body;
    EXPECT_NE(json["error"].get<std::string>().find(part), std::string::npos) << response.body;
  }

  // The click probabilities predict writes for `lines` (its --output CSV,
  // to float precision): the predict executable's own path.
  std::vector<float> PredictsProbabilities(const Job& job, const std::vector<std::string>& lines,
                                           const std::string& features_file) {
    const std::string model_file = Path("model.bin");
    const std::unique_ptr<Model> model = MakeJobModel(job).value();
    EXPECT_TRUE(WriteModelFile(model_file, job, *model, ClickParams(job, 0.5f)).ok());
    WriteLines(Path("test.txt"), lines);
    PredictOptions options;
    options.model_file = model_file;
    options.data.format = "criteo";
    options.data.test_file = Path("test.txt");
    if (!features_file.empty())
      options.data.features = ReadFeatureColumns(features_file, "criteo").value();
    options.output = Path("predictions.csv");
    const StatusOr<PredictionReport> report = RunPredict(options);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    std::ifstream csv(options.output);
    std::string row;
    std::getline(csv, row);  // label,predicted,p0,p1
    std::vector<float> p1;
    while (std::getline(csv, row))
      p1.push_back(std::strtof(row.substr(row.rfind(',') + 1).c_str(), nullptr));
    return p1;
  }

  fs::path dir_;
  ModelHolder holder_{"no model loaded yet"};
  PredictorPool pool_;
  ServeMetrics metrics_;
  FakeClock clock_;
  RequestHandler handler_{&holder_, &pool_, &metrics_, clock_, 1000};
};

// The server's probabilities are predict's on the same lines and model, to
// the bit, with and without a feature file, and in the lines' order.
TEST_F(RequestHandlerTest, ProbabilitiesArePredictsToTheBit) {
  std::ofstream(Path("columns.features"))
      << "C1 categorical C1 buckets=20\nC2 categorical C2 buckets=20\nI1 numeric I1 log1p\n"
         "I2b numeric I2 bucketize=0,1,5,20\n";
  for (const std::string features : {std::string(), Path("columns.features")}) {
    SCOPED_TRACE(features.empty() ? "no features" : "features");
    const Job job = ClickJob(Path("train.txt"), features);
    const std::vector<std::string> lines = CriteoLines(25, /*seed=*/3);
    const std::vector<float> expected = PredictsProbabilities(job, lines, features);
    holder_.Publish(ServedClickModel(job, 0.5f, 1200));

    const HttpResponse response = Post(Body("criteo", lines));
    ASSERT_EQ(response.status, 200) << response.body;
    const Json answer = Json::parse(response.body);
    EXPECT_EQ(answer["model_step"], 1200);
    EXPECT_EQ(answer["base_step"], 1200);
    const std::vector<double> got = answer["probabilities"].get<std::vector<double>>();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      // The JSON number is the float exactly (a double holds every float).
      EXPECT_EQ(static_cast<float>(got[i]), expected[i]) << "line " << i + 1;
      EXPECT_EQ(static_cast<double>(static_cast<float>(got[i])), got[i]);
    }
  }
}

TEST_F(RequestHandlerTest, BadRequestsSayWhatIsWrong) {
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt")), 0.5f, 7));
  const std::vector<std::string> good = CriteoLines(2);
  ExpectError(Post("{\"format\": \"criteo\", \"lines\": [}"), 400, "not valid JSON");
  ExpectError(Post(""), 400, "not valid JSON");
  ExpectError(Post("[1, 2]"), 400, "array, not an object");
  ExpectError(Post(Json{{"lines", good}}.dump()), 400, "\"format\" is missing");
  ExpectError(Post(Json{{"format", 3}, {"lines", good}}.dump()), 400, "\"format\" is a number");
  ExpectError(Post(Body("csv", good)), 400, "unknown format \"csv\"");
  ExpectError(Post(Json{{"format", "criteo"}}.dump()), 400, "\"lines\" is missing");
  ExpectError(Post(Json{{"format", "criteo"}, {"lines", "x"}}.dump()), 400,
              "\"lines\" is a string");
  ExpectError(Post(Body("criteo", {})), 400, "\"lines\" is empty");
  ExpectError(Post(Json{{"format", "criteo"}, {"lines", {good[0], 5}}}.dump()), 400,
              "line 2 is a number");
  // A line the reader refuses, by number; one of another format.
  std::string bad = good[1];
  bad.replace(bad.find('\t') + 1, 0, "x");  // I1 no integer
  ExpectError(Post(Body("criteo", {good[0], good[1], bad})), 400, "line 3: column 2 (I1): 'x");
  ExpectError(Post(Body("criteo", {good[0], ""})), 400, "line 2: holds no example");
  ExpectError(Post(Body("libsvm", {"1 3:1"})), 400, "do not fit");
  // Not JSON; too large; the wrong method; an unknown path.
  ExpectError(Post(Body("criteo", good), "text/plain"), 415, "text/plain");
  EXPECT_EQ(Post(Body("criteo", good), "Application/JSON; charset=utf-8").status, 200);
  EXPECT_EQ(Post(Body("criteo", good), "").status, 200);
  ExpectError(handler_.Handle({"POST", "/predict", "application/json", "", true}), 413,
              "over 1000 bytes");
  const HttpResponse get = handler_.Handle({"GET", "/predict", "", "", false});
  ExpectError(get, 405, "use POST");
  EXPECT_EQ(get.headers, (std::vector<std::pair<std::string, std::string>>{{"Allow", "POST"}}));
  ExpectError(handler_.Handle({"POST", "/metrics", "", "", false}), 405, "use GET");
  ExpectError(handler_.Handle({"GET", "/", "", "", false}), 404, "no such path: /");
}

// Whatever the body, an answer (never a crash): deep nesting, invalid
// UTF-8 in a line quoted back, bytes that are no JSON at all.
TEST_F(RequestHandlerTest, HostileBodiesGetAnAnswer) {
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt")), 0.5f, 7));
  EXPECT_EQ(Post(std::string(1000000, '[')).status, 400);
  EXPECT_EQ(Post(std::string(100000, '[') + std::string(100000, ']')).status, 400);
  std::string binary(4096, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 131);
  EXPECT_EQ(Post(binary).status, 400);
  // A criteo label of 60 multi-byte characters: the error quotes 40 bytes of it.
  std::string line = CriteoLines(1)[0];
  std::string label;
  for (int i = 0; i < 60; ++i) label += "\xc3\xa9";
  line.replace(0, 1, label);
  const HttpResponse quoted = Post(Body("criteo", {line}));
  ExpectError(quoted, 400, "line 1: column 1 (label)");
}

TEST_F(RequestHandlerTest, NoModelYetIs503UntilOneIsPublished) {
  holder_.SetWhyNone("no export in /exports yet");
  ExpectError(handler_.Handle({"GET", "/healthz", "", "", false}), 503, "no export in /exports");
  ExpectError(Post(Body("criteo", CriteoLines(1))), 503, "no export in /exports yet");
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt")), 0.5f, 7));
  EXPECT_EQ(handler_.Handle({"GET", "/healthz", "", "", false}).status, 200);
  EXPECT_EQ(Post(Body("criteo", CriteoLines(1))).status, 200);
}

TEST_F(RequestHandlerTest, MetricsCountRequestsExamplesAndTheModel) {
  const HttpResponse none = handler_.Handle({"GET", "/metrics", "", "", false});
  EXPECT_EQ(none.status, 200);
  EXPECT_EQ(none.body.find("pstrain_serve_model_step"), std::string::npos) << none.body;
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt")), 0.5f, 1250));
  EXPECT_EQ(Post(Body("criteo", CriteoLines(3))).status, 200);
  EXPECT_EQ(Post(Body("criteo", CriteoLines(2))).status, 200);
  EXPECT_EQ(Post("{").status, 400);
  const HttpResponse page = handler_.Handle({"GET", "/metrics", "", "", false});
  EXPECT_EQ(page.content_type, "text/plain; version=0.0.4");
  for (const char* line :
       {"pstrain_serve_model_step 1250\n", "pstrain_serve_model_base_step 1250\n",
        "pstrain_serve_model_loads_total 1\n", "pstrain_serve_requests_total{code=\"200\"} 3\n",
        "pstrain_serve_requests_total{code=\"400\"} 1\n", "pstrain_serve_examples_total 5\n",
        "# TYPE pstrain_serve_request_seconds histogram\n",
        // The fake clock stood still; the first /metrics counts as a 200.
        "pstrain_serve_request_seconds_bucket{le=\"0.0001\"} 4\n",
        "pstrain_serve_request_seconds_count 4\n",
        "# TYPE pstrain_serve_model_age_seconds gauge\n"}) {
    EXPECT_NE(page.body.find(line), std::string::npos) << line << " in\n" << page.body;
  }
}

}  // namespace
}  // namespace pst
