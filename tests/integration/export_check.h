// Checks of a run's incremental export (docs/STREAMING.md) shared by the
// cluster tests that export.
#ifndef PST_TESTS_INTEGRATION_EXPORT_CHECK_H_
#define PST_TESTS_INTEGRATION_EXPORT_CHECK_H_

#include <string>

namespace pst {

// The export folder `export_dir`, base and deltas applied, is the model
// file `model_file` to the bit, a dynamic table's keys included: the final
// export follows the model's last changes. `with_deltas`: the newest base
// has deltas (after a rollback's base at the very end it may not: nothing
// changed since).
void ExpectExportIsTheModel(const std::string& export_dir, const std::string& model_file,
                            bool with_deltas);

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_EXPORT_CHECK_H_
