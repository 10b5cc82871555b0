// ps: serves one shard of the model's variables.
#include "cli/flags.h"
#include "cli/ps_flags.h"

int main(int argc, char** argv) {
  pst::InitProgram(pst::Program::kPs, &argc, &argv,
                   "ps --ps_hosts=H:P,... --worker_hosts=H:P,... --chief_host=H:P "
                   "--task_index=K: serves shard K of the variables");
  auto options = pst::PsOptionsFromFlags();
  if (!options.ok()) return pst::ReportFlagError(options.status());
  pst::Status status = pst::RunPs(*options);
  if (!status.ok()) LOG(ERROR) << status.ToString();
  return status.ok() ? 0 : 1;
}
