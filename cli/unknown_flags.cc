#include "cli/unknown_flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace pst {
namespace {

// Levenshtein distance: the fewest one-character edits from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown flag --name [in file] [(did you mean --nearest?)]": the nearest
// flag is suggested when a few edits (a third of the name) reach it.
Status UnknownFlag(const std::string& name, const std::string& file) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string nearest;
  size_t nearest_distance = std::max<size_t>(1, name.size() / 3) + 1;
  for (const auto& f : flags) {
    const size_t d = EditDistance(name, f.name);
    if (d < nearest_distance) {
      nearest_distance = d;
      nearest = f.name;
    }
  }
  std::string message = "unknown flag --" + name;
  if (!file.empty()) message += " in " + file;
  if (!nearest.empty()) message += " (did you mean --" + nearest + "?)";
  return InvalidArgument(message);
}

Status CheckFlagFiles(const std::string& paths, int depth);

// Checks that `arg` ("-name", "--name=value", "--noname" for a bool) names a
// flag, and the flag files it names. `next` is the argument after it on the
// command line (null in a flag file): like gflags, a non-bool flag without
// '=' takes it as its value, and *took_next says so.
Status CheckFlag(const std::string& arg, const std::string& file, const char* next, bool* took_next,
                 int depth) {
  const size_t dashes = arg.find_first_not_of('-');
  std::string name = dashes == std::string::npos ? "" : arg.substr(dashes);
  std::optional<std::string> value;
  if (const size_t eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name.resize(eq);
  }
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
    const bool negated_bool = name.rfind("no", 0) == 0 &&
                              gflags::GetCommandLineFlagInfo(name.c_str() + 2, &info) &&
                              info.type == "bool";
    return negated_bool ? Status::OK() : UnknownFlag(name, file);
  }
  if (!value && info.type != "bool" && next != nullptr) {
    value = next;
    *took_next = true;
  }
  if (name == "flagfile" && value) return CheckFlagFiles(*value, depth + 1);
  return Status::OK();
}

// gflags skips a line of a --flagfile that names no flag, silently; so every
// flag file (a comma-separated list, as gflags reads it) is checked here.
Status CheckFlagFiles(const std::string& paths, int depth) {
  // A file that includes itself must not recurse forever.
  constexpr int kMaxDepth = 16;
  if (depth > kMaxDepth) {
    return InvalidArgument("--flagfile nests more than " + std::to_string(kMaxDepth) +
                           " deep (does a file include itself?)");
  }
  std::istringstream list(paths);
  for (std::string path; std::getline(list, path, ',');) {
    if (path.empty()) continue;
    std::ifstream in(path);
    if (!in) return InvalidArgument("--flagfile=" + path + " cannot be read");
    for (std::string line; std::getline(in, line);) {
      // Lines not starting with '-' are comments ('#') or names of the
      // programs the flags below are for; every program takes every flag.
      const size_t start = line.find_first_not_of(" \t");
      if (start == std::string::npos || line[start] != '-') continue;
      line = line.substr(start, line.find_last_not_of(" \t\r") + 1 - start);
      PST_RETURN_IF_ERROR(CheckFlag(line, path, nullptr, nullptr, depth));
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;                         // what follows is not flags
    if (arg.size() < 2 || arg[0] != '-') continue;  // not a flag
    bool took_next = false;
    PST_RETURN_IF_ERROR(
        CheckFlag(arg, "", i + 1 < argc ? argv[i + 1] : nullptr, &took_next, /*depth=*/0));
    i += took_next;
  }
  return Status::OK();
}

}  // namespace pst
