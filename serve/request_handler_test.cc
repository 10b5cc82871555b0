#include "serve/request_handler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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

// Criteo `line`'s values by Criteo's column names: the integers as JSON
// integers (in odd examples `i` as strings), an empty one left out, null or
// "" by turns; the strings as they are.
Json NamedCriteo(const std::string& line, int i) {
  std::vector<std::string> columns;
  std::stringstream fields(line);
  for (std::string field; std::getline(fields, field, '\t');) columns.push_back(field);
  columns.resize(40);
  Json example = Json::object();
  for (int j = 1; j <= 13; ++j) {
    const std::string name = "I" + std::to_string(j);
    const std::string& x = columns[j];
    if (x.empty()) {
      if (i % 3 == 1) example[name] = nullptr;
      if (i % 3 == 2) example[name] = "";
    } else if (i % 2 == 0) {
      example[name] = std::stoll(x);
    } else {
      example[name] = x;
    }
  }
  for (int f = 1; f <= 26; ++f) example["C" + std::to_string(f)] = columns[13 + f];
  return example;
}

// Libffm `line`'s entries by the names of ffm.features below: user and item
// as an id (item, in odd examples, as a list of one), history as a list of
// ids, genres as a list of [id, weight].
Json NamedLibffm(const std::string& line, int i) {
  const char* names[] = {"user", "item", "history", "genres"};
  Json example = Json::object();
  std::stringstream tokens(line);
  std::string token;
  tokens >> token;  // the label
  while (tokens >> token) {
    const size_t a = token.find(':'), b = token.find(':', a + 1);
    const int field = std::stoi(token.substr(0, a));
    const int64_t id = std::stoll(token.substr(a + 1, b - a - 1));
    const std::string name = names[field];
    if (field == 3) {
      example[name].push_back(Json::array({id, std::stod(token.substr(b + 1))}));
    } else if (field == 2 || (field == 1 && i % 2 == 1)) {
      example[name].push_back(id);
    } else {
      example[name] = id;
    }
  }
  return example;
}

std::string FieldsBody(const Json& examples) {
  return Json{{"format", "fields"}, {"examples", examples}}.dump();
}

// Both answers 200 with the same floats, to the bit, and not all one.
void ExpectSameProbabilities(const HttpResponse& lines, const HttpResponse& named) {
  ASSERT_EQ(lines.status, 200) << lines.body;
  ASSERT_EQ(named.status, 200) << named.body;
  std::vector<float> a, b;
  for (const double p : Json::parse(lines.body)["probabilities"].get<std::vector<double>>()) {
    a.push_back(static_cast<float>(p));
  }
  for (const double p : Json::parse(named.body)["probabilities"].get<std::vector<double>>()) {
    b.push_back(static_cast<float>(p));
  }
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << lines.body << "\n"
                                                                          << named.body;
  EXPECT_NE(*std::min_element(a.begin(), a.end()), *std::max_element(a.begin(), a.end()));
}

// An example of named fields gives its line's probability to the bit: by
// Criteo's names, by a criteo feature file's, by a libffm feature file's.
TEST_F(RequestHandlerTest, NamedFieldsGiveTheProbabilitiesOfTheirLinesToTheBit) {
  std::ofstream(Path("columns.features"))
      << "C1 categorical C1 buckets=20\nC2 categorical C2 buckets=20\nI1 numeric I1 log1p\n"
         "I2b numeric I2 bucketize=0,1,5,20\n";
  const std::vector<std::string> lines = CriteoLines(25, /*seed=*/3);
  for (const std::string features : {std::string(), Path("columns.features")}) {
    SCOPED_TRACE(features.empty() ? "no features" : "features");
    holder_.Publish(ServedClickModel(ClickJob(Path("train.txt"), features), 0.5f, 1200));
    Json examples = Json::array();
    for (size_t i = 0; i < lines.size(); ++i) {
      Json all = NamedCriteo(lines[i], static_cast<int>(i));
      if (features.empty()) {
        examples.push_back(all);
        continue;
      }
      // The file's names only: I2b reads I2.
      Json some = {{"C1", all["C1"]}, {"C2", all["C2"]}};
      if (all.contains("I1")) some["I1"] = all["I1"];
      if (all.contains("I2")) some["I2b"] = all["I2"];
      examples.push_back(some);
    }
    ExpectSameProbabilities(Post(Body("criteo", lines)), Post(FieldsBody(examples)));
  }
  WriteLines(Path("train.ffm"), LibffmLines(40));
  std::ofstream(Path("ffm.features"))
      << "user categorical 0 buckets=20\nitem categorical 1 buckets=30 table=items\n"
         "history multi_hot 2 buckets=30 table=items combiner=mean\n"
         "genres multi_hot 3 buckets=10 weighted\n";
  holder_.Publish(
      ServedClickModel(ClickJob(Path("train.ffm"), Path("ffm.features"), "libffm"), 0.5f, 1300));
  const std::vector<std::string> ffm = LibffmLines(25, /*seed=*/3);
  Json examples = Json::array();
  for (size_t i = 0; i < ffm.size(); ++i) examples.push_back(NamedLibffm(ffm[i], int(i)));
  ExpectSameProbabilities(Post(Body("libffm", ffm)), Post(FieldsBody(examples)));
  // libsvm: its one field, 0, by the file's name (as a libffm line's field 0).
  std::vector<std::string> svm;
  Json words = Json::array();
  for (int i = 0; i < 20; ++i) {
    const int a = i % 7, b = 7 + i % 5;
    svm.push_back(std::to_string(i % 2) + " " + std::to_string(a) + ":1 " + std::to_string(b) +
                  ":0.75");
    words.push_back({{"words", Json::array({a, Json::array({b, 0.75})})}});
  }
  WriteLines(Path("train.svm"), svm);
  std::ofstream(Path("svm.features")) << "words multi_hot 0 buckets=20 weighted\n";
  holder_.Publish(
      ServedClickModel(ClickJob(Path("train.svm"), Path("svm.features"), "libsvm"), 0.5f, 1400));
  ExpectSameProbabilities(Post(Body("libsvm", svm)), Post(FieldsBody(words)));
}

TEST_F(RequestHandlerTest, NamedFieldsSayWhatIsWrong) {
  // Example 2 of each request is wrong.
  auto fields = [this](const Json& wrong) {
    return Post(FieldsBody(Json::array({Json::object(), wrong})));
  };
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt")), 0.5f, 7));
  EXPECT_EQ(fields(Json::object()).status, 200);  // every field empty
  ExpectError(fields({{"C27", "x"}}), 400,
              "example 2: unknown field \"C27\": this model's fields are Criteo's columns "
              "I1..I13 and C1..C26");
  ExpectError(fields({{"label", 1}}), 400, "example 2: unknown field \"label\"");
  ExpectError(fields({{"I1", "x"}}), 400, "example 2: field \"I1\": 'x' is not a 64-bit integer");
  ExpectError(fields({{"I1", {1, 2}}}), 400, "field \"I1\": a list; this field takes an integer");
  ExpectError(fields({{"C3", "a\tb"}}), 400, "field \"C3\": 'a\tb' holds a tab or a line break");
  ExpectError(fields({{"C3", {5}}}), 400, "field \"C3\": a list; this field takes a string");
  // Columns of one source must agree.
  std::ofstream(Path("columns.features"))
      << "C1 categorical C1 buckets=20\nI2 numeric I2 log1p\nI2b numeric I2 bucketize=0,1,5\n";
  holder_.Publish(ServedClickModel(ClickJob(Path("train.txt"), Path("columns.features")), 0.5f, 8));
  EXPECT_EQ(fields({{"I2", 3}, {"I2b", 3}, {"C1", "v1"}}).status, 200);
  EXPECT_EQ(fields({{"I2", 3}, {"I2b", nullptr}}).status, 200);
  ExpectError(fields({{"I2", 3}, {"I2b", 4}}), 400,
              "example 2: fields \"I2\" and \"I2b\" both read I2 and give it different values");
  ExpectError(fields({{"C3", "x"}}), 400,
              "unknown field \"C3\": this model's fields are the feature file's columns C1, I2, "
              "I2b");
  // libffm: ids; without a feature file, no names.
  WriteLines(Path("train.ffm"), LibffmLines(40));
  std::ofstream(Path("ffm.features")) << "user categorical 0 buckets=20\n"
                                         "genres multi_hot 3 buckets=10 weighted\n";
  holder_.Publish(
      ServedClickModel(ClickJob(Path("train.ffm"), Path("ffm.features"), "libffm"), 0.5f, 9));
  EXPECT_EQ(fields({{"user", 3}, {"genres", {1, {2, 0.5}}}}).status, 200);
  ExpectError(fields({{"user", -1}}), 400, "field \"user\": -1 is no id (an integer >= 0)");
  ExpectError(fields({{"genres", "x"}}), 400,
              "field \"genres\": a string; this field takes an id (an integer >= 0), or a list of "
              "ids or of [id, weight]");
  holder_.Publish(ServedClickModel(ClickJob(Path("train.ffm"), "", "libffm"), 0.5f, 10));
  ExpectError(fields({{"user", 3}}), 400,
              "trained on libffm or libsvm lines without a feature file (--features): its fields "
              "have no names; send \"lines\"");
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
