// InitialRow: the value an embedding table's row starts from, a seeded
// function of (table, key), so that a restarted ps, a replica and a model
// file's reader (a key the file lacks) all make the same row. Kept apart
// from the ps' tables so that predict and serve need none of them.
#ifndef PST_MODEL_CTR_INITIAL_ROW_H_
#define PST_MODEL_CTR_INITIAL_ROW_H_

#include <cstdint>
#include <string>

namespace pst {

// The initial value of row `key` of table `name` (dim floats into *row),
// uniform in [-init_scale, init_scale).
void InitialRow(uint64_t seed, const std::string& name, int64_t key, float init_scale, int64_t dim,
                float* row);

}  // namespace pst

#endif  // PST_MODEL_CTR_INITIAL_ROW_H_
