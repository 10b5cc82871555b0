// Small helpers shared by the multi-process tests.
#ifndef PST_TESTS_INTEGRATION_TEST_UTIL_H_
#define PST_TESTS_INTEGRATION_TEST_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include "tests/integration/local_cluster.h"

namespace pst {

// The number after `key` on the last line of `text` that holds it, e.g.
// ReportValue(log, "Test-Accuracy: ").
std::optional<double> ReportValue(const std::string& text, const std::string& key);
// Lines of a file.
std::vector<std::string> ReadLines(const std::string& path);
// Whether the file starts with PNG's signature.
bool IsPng(const std::string& path);
// The rows of a Markdown table file below its header and separator line,
// each split into its cells (trimmed).
std::vector<std::vector<std::string>> TableRows(const std::string& path);
// "name=code, ..." for failure messages.
std::string DescribeExits(const std::vector<TaskExit>& exits);
// The test venv's python ($PST_TEST_PYTHON, made by scripts/test_venv.sh)
// when it imports every module of `modules` ("onnx,onnxruntime"); else ""
// with *why_not saying what is missing and how to get it.
std::string TestPython(const std::string& modules, std::string* why_not);
// PIDs of running processes whose command line contains `needle`.
std::vector<int> ProcessesMentioning(const std::string& needle);
// Whether `text` shows up in the task's log within 30 s.
bool WaitForLogLine(ChildProcess& task, const std::string& text);

// Generates a click log into `dir` with examples/make_ctr_problem.py (from
// PST_SOURCE_DIR) and `args`: "" when it ran, else what went wrong, with
// the generator's log.
std::string MakeCtrProblem(const std::string& dir, const std::vector<std::string>& args);
// A number of the generator's `dir`/problem.json ("bayes_test_auc",
// "lr_test_auc"); nullopt when it has none.
std::optional<double> ProblemNumber(const std::string& dir, const std::string& key);
// File k of a stream: lines [k * lines, (k + 1) * lines) of `source`
// written to `in`/part-<1000 + k> under a hidden name and renamed in, as a
// log shipper does.
void PublishStreamFile(const std::string& source, const std::string& in, int k, int lines);

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_TEST_UTIL_H_
