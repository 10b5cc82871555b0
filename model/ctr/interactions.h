// The parameter-free interaction layers of click models, over each
// example's field vectors (batch, n, dim), row-major:
//
//   FM (Rendle 2010): one value per example, the sum over pairs i < j of
//     <v_i, v_j>, in O(n dim) as 0.5 * sum_c [(sum_i v_ic)^2 - sum_i v_ic^2].
//   Dot (DLRM, Naumov et al. 2019): the n(n-1)/2 dot products <v_i, v_j>,
//     i < j, in the order (0,1), (0,2), .., (0,n-1), (1,2), .., (n-2,n-1).
//
// The backward passes ADD to dv (the field vectors usually feed other parts
// of the model too). Stateless and thread-safe.
#ifndef PST_MODEL_CTR_INTERACTIONS_H_
#define PST_MODEL_CTR_INTERACTIONS_H_

#include <cstdint>

namespace pst {

// y (batch).
void FmForward(const float* v, int64_t batch, int64_t n, int64_t dim, float* y);
// dy (batch); dv += dy * d(FM)/dv = dy_b * (sum_i v_ic - v_jc).
void FmBackward(const float* v, const float* dy, int64_t batch, int64_t n, int64_t dim, float* dv);

inline int64_t DotPairs(int64_t n) { return n * (n - 1) / 2; }
// y (batch, DotPairs(n)).
void DotForward(const float* v, int64_t batch, int64_t n, int64_t dim, float* y);
// dy (batch, DotPairs(n)); dv_i += dy_ij v_j and dv_j += dy_ij v_i.
void DotBackward(const float* v, const float* dy, int64_t batch, int64_t n, int64_t dim, float* dv);

}  // namespace pst

#endif  // PST_MODEL_CTR_INTERACTIONS_H_
