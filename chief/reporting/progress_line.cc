#include "chief/reporting/progress_line.h"

#include "common/clock.h"

namespace pst {

ProgressLine::ProgressLine(std::FILE* out, bool in_place, MonotonicClock::Duration every)
    : out_(out),
      in_place_(in_place),
      every_(in_place ? MonotonicClock::Duration(kRedrawInterval) : every) {}

bool ProgressLine::Due(MonotonicClock::TimePoint now) const {
  return !last_shown_ || now - *last_shown_ >= every_;
}

void ProgressLine::Show(MonotonicClock::TimePoint now, const std::string& text) {
  last_shown_ = now;
  if (in_place_) {
    // \r and "erase to the end of the line" (ESC [ K): a shorter text leaves
    // nothing of the longer one before it.
    std::fprintf(out_, "\rProgress: %s\x1b[K", text.c_str());
    drawn_ = true;
  } else {
    std::fprintf(out_, "Progress: %s\n", text.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::Clear() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

void ProgressLine::End() {
  if (!drawn_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace pst
