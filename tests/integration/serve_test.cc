// serve next to a real streaming job: 2 ps and 2 workers train click-log
// files as they appear (--follow), the chief exports the model every second
// (a base, then deltas), and serve follows the export folder while test
// lines are sent to POST /predict. The server is SIGKILLed once it has
// answered from a delta and started again on the same folder; the job ends
// with SIGTERM. Every answer must come from the export it names: predict on
// that export step (--export_dir, --export_step) gives the same floats, to
// the bit, and predict on the export before it does not (so a server that
// answered from another model than it reports would fail). The tables are
// dynamic and full: keys come and go between exports. At the end the same
// lines as named fields answer as the lines do.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/integration/child_process.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kFiles = 10;
constexpr int kLinesPerFile = 1000;  // 10 batches of 100
constexpr int kQueryLines = 16;

struct HttpReply {
  int status = 0;  // 0: no answer (nothing listens, or it closed early)
  std::string body;
};

// POST http://127.0.0.1:port/path with a JSON body, on a connection of its
// own that the server closes after its answer.
HttpReply HttpPost(int port, const std::string& path, const std::string& body) {
  HttpReply reply;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string all;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "POST " + path +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                "application/json\r\nConnection: close\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    for (size_t sent = 0; sent < request.size();) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buffer[65536];
    for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) all.append(buffer, n);
  }
  close(fd);
  const size_t blank = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || blank == std::string::npos) return reply;
  reply.status = std::atoi(all.c_str() + 9);
  reply.body = all.substr(blank + 4);
  return reply;
}

// Whether `text` shows up in the task's log within `timeout`.
bool WaitForLog(ChildProcess& task, const std::string& text, seconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (task.Log().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return true;
}

// One answer of serve: the export it names and its probabilities.
struct Answer {
  int server = 0;  // which start of the server (0: before the kill)
  int64_t model_step = 0;
  int64_t base_step = 0;
  std::vector<float> probabilities;
};

// A started serve and the port it listens on.
struct Server {
  std::unique_ptr<ChildProcess> process;
  int port = 0;
};

// The export steps in `dir` (base-<step>.bin and delta-<step>.bin), sorted.
std::vector<int64_t> ExportSteps(const std::string& dir) {
  std::vector<int64_t> steps;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    for (const std::string prefix : {"base-", "delta-"}) {
      if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 4 &&
          name.compare(name.size() - 4, 4, ".bin") == 0) {
        steps.push_back(std::stoll(name.substr(prefix.size(), name.size() - prefix.size() - 4)));
      }
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_dir_ = new std::string(MakeTestDir("ServeTest-data"));
    ASSERT_EQ(
        MakeCtrProblem(*data_dir_, {"--train_examples=" + std::to_string(kFiles * kLinesPerFile),
                                    "--test_examples=" + std::to_string(kQueryLines), "--seed=5",
                                    "--lr_epochs=0"}),
        "");
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_dir_);
    delete data_dir_;
  }

  // File k of the stream.
  static void Publish(const std::string& in, int k) {
    PublishStreamFile(*data_dir_ + "/train.txt", in, k, kLinesPerFile);
  }

  static std::vector<std::string> JobFlags(const std::string& dir) {
    return {"--dataset=criteo", "--model=deepfm", "--follow", "--train_files=" + dir + "/in/part-*",
            "--test_file=" + QueryFile(),
            // Dynamic tables too small for the stream's keys: the exports
            // carry keys created, written and evicted.
            "--embedding_capacity=3000", "--batch_size=100", "--train_steps=0",
            "--export_every_secs=1", "--export_base_every=3",
            "--keep_export_bases=1000",  // every export the test checks stays
            "--run_dir=" + dir + "/run"};
  }

  // The lines sent to the server (the generator's test set).
  static std::string QueryFile() { return *data_dir_ + "/test.txt"; }

  // serve on the job's export folder, on a port the OS picks.
  static Server StartServe(const std::string& dir, int start) {
    Server server;
    auto process = ChildProcess::Start({BinDir() + "/serve", "--export_dir=" + dir + "/run/export",
                                        "--port=0", "--reload_every_ms=100", "--threads=2"},
                                       dir + "/serve-" + std::to_string(start) + ".log");
    EXPECT_TRUE(process.ok()) << process.status().ToString();
    if (!process.ok()) return server;
    server.process = std::move(process).value();
    const std::string needle = "serve: listening on 127.0.0.1:";
    EXPECT_TRUE(WaitForLog(*server.process, needle, seconds(60))) << server.process->Log();
    const std::string log = server.process->Log();
    const size_t at = log.find(needle);
    if (at != std::string::npos) server.port = std::atoi(log.c_str() + at + needle.size());
    EXPECT_GT(server.port, 0) << log;
    return server;
  }

  // Asks `server` (start `start`) for the query lines' probabilities until
  // it answers from an export after `after_step`; keeps every answer in
  // answers_. False when none came within two minutes.
  bool AskUntilAfter(const Server& server, int start, int64_t after_step) {
    const Json body = {{"format", "criteo"}, {"lines", ReadLines(QueryFile())}};
    const auto give_up = std::chrono::steady_clock::now() + seconds(120);
    while (std::chrono::steady_clock::now() < give_up) {
      const HttpReply reply = HttpPost(server.port, "/predict", body.dump());
      if (reply.status == 200) {
        const Json answer = Json::parse(reply.body);
        Answer a{
            start, answer["model_step"].get<int64_t>(), answer["base_step"].get<int64_t>(), {}};
        for (const Json& p : answer["probabilities"]) {
          a.probabilities.push_back(static_cast<float>(p.get<double>()));
        }
        EXPECT_EQ(a.probabilities.size(), static_cast<size_t>(kQueryLines)) << reply.body;
        answers_.push_back(a);
        if (a.model_step > after_step) return true;
      } else {
        // 503 until the first export is loaded; nothing else.
        EXPECT_EQ(reply.status, 503) << reply.body;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }

  // `rounds` times: a new file, then questions until the server answers
  // from an export after *step (the file trained, exported and loaded).
  void Rounds(const std::string& dir, const Server& server, int start, int rounds, int64_t* step) {
    for (int r = 0; r < rounds; ++r) {
      ASSERT_LT(published_, kFiles) << "no file left to publish";
      Publish(dir + "/in", published_++);
      ASSERT_TRUE(AskUntilAfter(server, start, *step)) << server.process->Log();
      *step = answers_.back().model_step;
    }
  }

  // The query lines as named fields (docs/SERVING.md) answer as the lines
  // do, from the model served now (the job has ended: it stays).
  void ExpectNamedFieldsAnswerAsLines(int port) {
    Json examples = Json::array();
    for (const std::string& line : ReadLines(QueryFile())) {
      Json example = Json::object();
      size_t begin = line.find('\t') + 1;  // after the label
      for (int column = 1; column <= 39; ++column) {
        const size_t end = std::min(line.find('\t', begin), line.size());
        const std::string value = line.substr(begin, end - begin);
        begin = end + 1;
        if (column <= 13 && !value.empty())
          example["I" + std::to_string(column)] = std::stoll(value);
        if (column > 13) example["C" + std::to_string(column - 13)] = value;
      }
      examples.push_back(example);
    }
    const HttpReply named =
        HttpPost(port, "/predict", Json{{"format", "fields"}, {"examples", examples}}.dump());
    const HttpReply lines = HttpPost(
        port, "/predict", Json{{"format", "criteo"}, {"lines", ReadLines(QueryFile())}}.dump());
    ASSERT_EQ(named.status, 200) << named.body;
    ASSERT_EQ(lines.status, 200) << lines.body;
    EXPECT_EQ(Json::parse(named.body), Json::parse(lines.body));
  }

  // The click probabilities predict computes for the query lines from
  // export step `step`.
  static std::vector<float> PredictAt(const std::string& dir, int64_t step) {
    const std::string out = dir + "/predict-" + std::to_string(step) + ".csv";
    auto predict =
        ChildProcess::Start({BinDir() + "/predict", "--export_dir=" + dir + "/run/export",
                             "--export_step=" + std::to_string(step), "--dataset=criteo",
                             "--test_file=" + QueryFile(), "--output=" + out},
                            dir + "/predict-" + std::to_string(step) + ".log");
    EXPECT_TRUE(predict.ok()) << predict.status().ToString();
    if (!predict.ok()) return {};
    EXPECT_EQ((*predict)->Wait(seconds(120)), 0) << (*predict)->Log();
    std::vector<float> clicks;
    const std::vector<std::string> rows = ReadLines(out);
    for (size_t i = 1; i < rows.size(); ++i) {  // label,predicted,p0,p1
      clicks.push_back(std::strtof(rows[i].c_str() + rows[i].rfind(',') + 1, nullptr));
    }
    return clicks;
  }

  std::vector<Answer> answers_;
  int published_ = 0;  // files of the stream so far

  static std::string* data_dir_;
};

std::string* ServeTest::data_dir_ = nullptr;

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_F(ServeTest, EveryAnswerIsPredictOnTheExportItNamesThroughAServerKill) {
  LocalCluster cluster(2, 2, MakeTestDir("ServeTest"));
  const std::string dir = cluster.dir();
  fs::create_directories(dir + "/in");
  Publish(dir + "/in", published_++);
  const std::vector<std::string> flags = JobFlags(dir);
  for (int k = 0; k < 2; ++k) cluster.StartTask("ps", k, {});
  cluster.StartTask("chief", 0, flags);
  // 50 ms a batch (half a second a file): exports land while files train.
  std::vector<std::string> worker_flags = flags;
  worker_flags.push_back("--simulated_delay_ms=50");
  for (int w = 0; w < 2; ++w) cluster.StartTask("worker", w, worker_flags);
  auto chief = [&] { return cluster.task("chief").Log(); };

  // Round by round a new file, until the server answers from the export
  // after it: a base, then deltas (a base every 3 exports).
  Server first = StartServe(dir, 0);
  ASSERT_GT(first.port, 0);
  int64_t step = -1;
  ASSERT_TRUE(AskUntilAfter(first, 0, step)) << first.process->Log() << chief();
  step = answers_.back().model_step;
  ASSERT_NO_FATAL_FAILURE(Rounds(dir, first, 0, 3, &step));
  ASSERT_TRUE(std::any_of(answers_.begin(), answers_.end(), [](const Answer& a) {
    return a.model_step != a.base_step;
  })) << "no answer from a delta";
  // Killed between two answers while the job trains on; started again, it
  // loads the newest base and its deltas, then follows the folder across
  // the next base.
  first.process->Signal(SIGKILL);
  EXPECT_EQ(first.process->Wait(seconds(10)), 128 + SIGKILL);
  Publish(dir + "/in", published_++);
  Server second = StartServe(dir, 1);
  ASSERT_GT(second.port, 0);
  ASSERT_TRUE(AskUntilAfter(second, 1, -1)) << second.process->Log() << chief();
  EXPECT_GE(answers_.back().model_step, step);
  step = answers_.back().model_step;
  ASSERT_NO_FATAL_FAILURE(Rounds(dir, second, 1, 3, &step));

  // The job ends as a streaming job does; its final export is served too.
  ASSERT_TRUE(WaitForLog(cluster.task("chief"),
                         "stream caught up: " + std::to_string(published_) + " files",
                         seconds(120)))
      << chief();
  cluster.task("chief").Signal(SIGTERM);
  const std::vector<TaskExit> exits = cluster.WaitAll(seconds(120));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << "\n" << chief();
  const std::vector<int64_t> steps = ExportSteps(dir + "/run/export");
  ASSERT_GE(steps.size(), 3u);
  if (answers_.back().model_step < steps.back()) {
    ASSERT_TRUE(AskUntilAfter(second, 1, steps.back() - 1)) << second.process->Log();
  }
  // The same lines by Criteo's column names: the same floats.
  ExpectNamedFieldsAnswerAsLines(second.port);
  second.process->Signal(SIGTERM);
  EXPECT_EQ(second.process->Wait(seconds(30)), 0) << second.process->Log();

  // Each export answered, by each server: predict on it, to the bit; the
  // export before it (after it, for the first) gives other probabilities.
  std::map<int64_t, std::vector<float>> by_step;
  std::set<int> servers;
  for (const Answer& a : answers_) {
    servers.insert(a.server);
    auto [kept, inserted] = by_step.emplace(a.model_step, a.probabilities);
    EXPECT_TRUE(SameBits(kept->second, a.probabilities))
        << "two answers from step " << a.model_step << " differ";
  }
  EXPECT_EQ(servers.size(), 2u);
  EXPECT_GE(by_step.size(), 7u);
  std::string checked;
  for (const auto& [model_step, served] : by_step) checked += " " + std::to_string(model_step);
  std::printf("%zu answers from %zu exports of %zu, steps%s\n", answers_.size(), by_step.size(),
              steps.size(), checked.c_str());
  for (const auto& [model_step, served] : by_step) {
    SCOPED_TRACE("export step " + std::to_string(model_step));
    const std::vector<float> predicted = PredictAt(dir, model_step);
    ASSERT_EQ(predicted.size(), served.size());
    for (size_t i = 0; i < served.size(); ++i) {
      EXPECT_EQ(predicted[i], served[i]) << "line " << i + 1;
    }
    EXPECT_TRUE(SameBits(predicted, served));
    const auto at = std::find(steps.begin(), steps.end(), model_step);
    ASSERT_NE(at, steps.end()) << "the server named an export that is not in the folder";
    const int64_t neighbour = at == steps.begin() ? at[1] : at[-1];
    EXPECT_FALSE(SameBits(PredictAt(dir, neighbour), served))
        << "export " << neighbour << " answers as " << model_step << " does: the check above "
        << "cannot tell exports apart";
  }
}

}  // namespace
}  // namespace pst
