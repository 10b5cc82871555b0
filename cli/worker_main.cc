// worker: trains the model on its shard of the data.
#include "cli/flags.h"
#include "cli/worker_flags.h"

int main(int argc, char** argv) {
  pst::InitProgram(pst::Program::kWorker, &argc, &argv,
                   "worker --ps_hosts=... --worker_hosts=... --chief_host=... "
                   "--task_index=I --model=mlp --data_dir=DIR: trains as worker I");
  auto options = pst::WorkerOptionsFromFlags();
  if (!options.ok()) return pst::ReportFlagError(options.status());
  pst::Status status = pst::RunWorker(*options);
  if (!status.ok()) LOG(ERROR) << status.ToString();
  return status.ok() ? 0 : 1;
}
