// chief: starts the cluster, follows training, evaluates, stops everything.
#include "chief/chief_task.h"
#include "cli/chief_flags.h"
#include "cli/flags.h"

int main(int argc, char** argv) {
  pst::InitProgram(pst::Program::kChief, &argc, &argv,
                   "chief --ps_hosts=... --worker_hosts=... --chief_host=... "
                   "--train_steps=N: coordinates training of the cluster");
  auto options = pst::ChiefOptionsFromFlags();
  if (!options.ok()) return pst::ReportFlagError(options.status());
  int stop_signal = 0;
  const pst::Status status = pst::RunChief(*options, &stop_signal);
  if (!status.ok()) LOG(ERROR) << status.ToString();
  return pst::ChiefExitCode(status, stop_signal);
}
