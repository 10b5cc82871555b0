#include "tests/integration/test_util.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace pst {

std::optional<double> ReportValue(const std::string& text, const std::string& key) {
  const size_t at = text.rfind(key);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(text.c_str() + at + key.size(), nullptr);
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool IsPng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return std::string(magic, 8) == "\x89PNG\r\n\x1a\n";
}

std::vector<std::vector<std::string>> TableRows(const std::string& path) {
  const std::vector<std::string> lines = ReadLines(path);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(lines[i].substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const size_t first = cell.find_first_not_of(' ');
      cells.push_back(first == std::string::npos
                          ? ""
                          : cell.substr(first, cell.find_last_not_of(' ') - first + 1));
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::string TestPython(const std::string& modules, std::string* why_not) {
  const char* python = std::getenv("PST_TEST_PYTHON");
  if (python == nullptr || !std::filesystem::exists(python)) {
    *why_not = "no test venv (PST_TEST_PYTHON=" + std::string(python ? python : "") +
               "): run scripts/test_venv.sh (needs PyPI) for " + modules;
    return "";
  }
  const std::string probe = std::string("'") + python + "' -c 'import " + modules + "' 2>/dev/null";
  if (std::system(probe.c_str()) != 0) {
    *why_not = std::string(python) + " cannot import " + modules + ": run scripts/test_venv.sh";
    return "";
  }
  return python;
}

std::string DescribeExits(const std::vector<TaskExit>& exits) {
  std::string out;
  for (const TaskExit& e : exits) {
    out += (out.empty() ? "" : ", ") + e.name + "=" + std::to_string(e.code);
  }
  return out;
}

std::vector<int> ProcessesMentioning(const std::string& needle) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(name) == ::getpid()) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().find(needle) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

bool WaitForLogLine(ChildProcess& task, const std::string& text) {
  for (int i = 0; i < 3000 && task.Log().find(text) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return task.Log().find(text) != std::string::npos;
}

std::string MakeCtrProblem(const std::string& dir, const std::vector<std::string>& args) {
  const char* source = std::getenv("PST_SOURCE_DIR");
  if (source == nullptr) return "PST_SOURCE_DIR is not set (run through ctest)";
  std::vector<std::string> argv = {"/usr/bin/env", "python3",
                                   std::string(source) + "/examples/make_ctr_problem.py", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  StatusOr<std::unique_ptr<ChildProcess>> generator =
      ChildProcess::Start(argv, dir + "/generator.log");
  if (!generator.ok()) return generator.status().ToString();
  const std::optional<int> code = (*generator)->Wait(std::chrono::seconds(300));
  if (code == 0) return "";
  return "make_ctr_problem.py " +
         (code ? "exited " + std::to_string(*code) : std::string("did not end in 300 s")) + ":\n" +
         (*generator)->Log();
}

std::optional<double> ProblemNumber(const std::string& dir, const std::string& key) {
  std::ifstream problem(dir + "/problem.json");
  std::stringstream text;
  text << problem.rdbuf();
  return ReportValue(text.str(), "\"" + key + "\": ");
}

void PublishStreamFile(const std::string& source, const std::string& in, int k, int lines) {
  std::ifstream train(source);
  std::string line;
  for (int i = 0; i < k * lines; ++i) std::getline(train, line);
  const std::string name = "part-" + std::to_string(1000 + k);
  {
    std::ofstream out(in + "/." + name);
    for (int i = 0; i < lines && std::getline(train, line); ++i) out << line << "\n";
  }
  std::filesystem::rename(in + "/." + name, in + "/" + name);
}

}  // namespace pst
