#include "serve/served_model.h"

#include <sys/stat.h>

#include <utility>

#include "predict/loaded_model.h"

namespace pst {
namespace {

// The modification time of `path`, or `otherwise` when it cannot be read
// (an export file removed since it was loaded).
std::chrono::system_clock::time_point WrittenAt(const std::string& path,
                                                std::chrono::system_clock::time_point otherwise) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return otherwise;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(info.st_mtim.tv_sec) +
          std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
}

StatusOr<std::unique_ptr<ServedModel>> Served(TrainedModel trained, std::string source) {
  PST_RETURN_IF_ERROR(CheckServable(trained, source));
  auto served = std::make_unique<ServedModel>();
  served->trained = std::move(trained);
  served->loaded_at = std::chrono::system_clock::now();
  served->written_at = WrittenAt(source, served->loaded_at);
  served->source = std::move(source);
  SetFieldNames(served.get());
  return served;
}

}  // namespace

Status CheckServable(const TrainedModel& trained, const std::string& source) {
  if (!trained.click_model) {
    return FailedPrecondition(source + " holds " + ModelDescription(trained) +
                              ", no click model: serve answers click models only");
  }
  // Built once here so that a model that cannot be built is refused on
  // loading, not on every request.
  const StatusOr<std::unique_ptr<LoadedModel>> built = LoadedModel::Make(trained, source);
  if (!built.ok()) {
    return FailedPrecondition(source + ": cannot build its model: " + built.status().message());
  }
  return Status::OK();
}

void SetFieldNames(ServedModel* served) {
  StatusOr<NamedFields> names = NamedFields::Of(served->trained);
  if (names.ok()) {
    served->field_names = std::make_shared<const NamedFields>(std::move(names).value());
  } else {
    served->no_field_names = names.status().message();
  }
}

StatusOr<std::unique_ptr<ServedModel>> ServeModelFile(const std::string& path) {
  PST_ASSIGN_OR_RETURN(TrainedModel trained, ReadModelFile(path));
  return Served(std::move(trained), path);
}

StatusOr<std::unique_ptr<ServedModel>> ServeExport(const std::string& dir,
                                                   const ExportedModel& exported) {
  const std::string newest =
      exported.deltas == 0 ? BaseFileName(exported.step) : DeltaFileName(exported.step);
  PST_ASSIGN_OR_RETURN(std::unique_ptr<ServedModel> served,
                       Served(exported.trained, dir + "/" + newest));
  served->step = exported.step;
  served->base_step = exported.base_step;
  return served;
}

}  // namespace pst
