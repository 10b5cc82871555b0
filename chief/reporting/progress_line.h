// ProgressLine: shows a progress text on a stream. On a terminal the text is
// one line redrawn in place ("\r", then clear to the end of the line), a few
// times a second; in a file or a pipe (a log, run_local.sh) it is a new
// "Progress: ..." line every `every`, so the log stays readable.
//
// Due() and Show() take the time, so tests use fake time. Borrows `out`.
// Not thread-safe.
#ifndef PST_CHIEF_REPORTING_PROGRESS_LINE_H_
#define PST_CHIEF_REPORTING_PROGRESS_LINE_H_

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "common/clock.h"

namespace pst {

class ProgressLine {
 public:
  // How often a terminal's line is redrawn.
  static constexpr std::chrono::milliseconds kRedrawInterval{250};

  // `in_place`: `out` is a terminal. `every`: between two lines in a file.
  ProgressLine(std::FILE* out, bool in_place, MonotonicClock::Duration every);

  // Whether Show(now, ...) would be the next line: the first one, or one
  // interval after the last.
  bool Due(MonotonicClock::TimePoint now) const;
  // Shows `text` now, whether due or not (e.g. the final one).
  void Show(MonotonicClock::TimePoint now, const std::string& text);
  // Before other output: on a terminal, erases the drawn line (the next
  // Show draws it again below that output). Nothing in a file.
  void Clear();
  // On a terminal, ends the drawn line so that what follows keeps it.
  void End();

 private:
  std::FILE* const out_;
  const bool in_place_;
  const MonotonicClock::Duration every_;
  std::optional<MonotonicClock::TimePoint> last_shown_;
  bool drawn_ = false;  // a terminal line without its newline yet
};

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_PROGRESS_LINE_H_
