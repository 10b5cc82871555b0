#include "cli/help_request.h"

#include <gflags/gflags.h>

#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/version.h"

namespace pst {

HelpRequest FindHelpRequest(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;  // what follows is not flags
    if (arg == "-h") return HelpRequest::kHelp;
    if (arg.rfind("--", 0) == 0) {
      arg.remove_prefix(2);
    } else if (arg.rfind('-', 0) == 0) {
      arg.remove_prefix(1);
    } else {
      continue;
    }
    if (arg == "help" || arg == "helpshort") return HelpRequest::kHelp;
    if (arg == "helpfull") return HelpRequest::kHelpFull;
    if (arg == "version") return HelpRequest::kVersion;
  }
  return HelpRequest::kNone;
}

std::string ProgramName(const char* argv0) {
  const char* slash = std::strrchr(argv0, '/');
  return slash == nullptr ? argv0 : slash + 1;
}

bool PrintHelpOrVersion(int argc, char** argv, const char* flags_file) {
  switch (FindHelpRequest(argc, argv)) {
    case HelpRequest::kNone: return false;
    case HelpRequest::kHelp: gflags::ShowUsageWithFlagsRestrict(argv[0], flags_file); return true;
    case HelpRequest::kHelpFull: gflags::ShowUsageWithFlags(argv[0]); return true;
    case HelpRequest::kVersion:
      std::cout << VersionLine(ProgramName(argv[0])) << std::endl;
      return true;
  }
  return false;
}

}  // namespace pst
