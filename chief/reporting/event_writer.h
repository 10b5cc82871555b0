// EventWriter: scalars in a TensorFlow event file, so TensorBoard can plot a
// run while it trains (`tensorboard --logdir <logdir>`). RunEventDir names
// each run's own folder under a shared logdir.
//
// The file is <logdir>/events.out.tfevents.<unix-seconds>.<hostname>: TFRecord
// framing around serialized tensorflow.Event protobufs, encoded here by hand.
// The first record announces the format ("brain.Event:2"); each AddScalars call
// appends one Event and flushes it.
//
// Not thread-safe: one thread writes. The writer owns its file and closes it.
#ifndef PST_CHIEF_REPORTING_EVENT_WRITER_H_
#define PST_CHIEF_REPORTING_EVENT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace pst {

// The folder of one run's event files: <logdir>/<last name of run_dir>, so
// runs sharing a logdir show as separate runs in TensorBoard (and a restarted
// chief adds to its run). Without a run folder: <logdir>/run-<local time>-<pid>.
std::string RunEventDir(const std::string& logdir, const std::string& run_dir);

class EventWriter {
 public:
  // Creates logdir (and its parents) and a new event file in it. Fails if the
  // folder cannot be made or the file cannot be created (or already exists).
  static StatusOr<std::unique_ptr<EventWriter>> Open(const std::string& logdir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // One Event at `step`, stamped with the current wall time, holding every
  // (tag, value) pair; values are stored as float, as TensorBoard keeps them.
  Status AddScalars(int64_t step, const std::vector<std::pair<std::string, double>>& scalars);
  Status AddScalar(const std::string& tag, int64_t step, double value) {
    return AddScalars(step, {{tag, value}});
  }

  const std::string& path() const { return path_; }

 private:
  EventWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  // Appends one TFRecord holding `data`, then flushes.
  Status WriteRecord(const std::string& data);

  const std::string path_;
  std::FILE* const file_;
};

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_EVENT_WRITER_H_
