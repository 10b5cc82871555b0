// CpuKernels' convolution and max-pooling (NHWC activations, HWIO filters).
//
// A convolution is lowered to a single GEMM over the whole batch: row m of
// the im2col matrix `col` (B*P*Q, R*S*C) holds the input patch under output
// pixel m, in the filter's (r,s,c) order, so that with w viewed as the
// (R*S*C, K) matrix it is:
//   forward           y    = col * w + b        (MatmulForward)
//   weight gradient   dw   = col^T * dy         (MatmulBackwardWeights)
//   input gradient    dcol = dy * w^T           (MatmulBackwardInput),
//                     then dx = col2im(dcol), the adjoint of im2col.
// NHWC is what makes this work without transposes: y and dy already are
// (B*P*Q, K) matrices, and each filter row's taps (s,c) are one contiguous
// run of S*C floats in x, so im2col is one copy per (output pixel, r).
#include <glog/logging.h>

#include <Eigen/Core>
#include <algorithm>
#include <limits>

#include "kernels/cpu_kernels.h"

namespace pst {
namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

// Where filter row r of output pixel (p,q) falls in the (unpadded) input:
// input row h, and the taps s in [s_lo, s_hi) that land inside the image, at
// input columns w0 + s. The other taps, or all of them when `empty`, read
// the zero padding.
struct PatchRow {
  int64_t h, w0, s_lo, s_hi;
  bool empty;
};

PatchRow Locate(const Conv2DShape& shape, int64_t p, int64_t q, int64_t r) {
  PatchRow row;
  row.h = p * shape.stride + r - shape.padding;
  row.w0 = q * shape.stride - shape.padding;
  row.s_lo = std::max<int64_t>(0, -row.w0);
  row.s_hi = std::min(shape.filter_width, shape.width - row.w0);
  row.empty = row.h < 0 || row.h >= shape.height || row.s_lo >= row.s_hi;
  return row;
}

// x is (B,H,W,C), col is (B*P*Q, R*S*C).
void Im2Col(const float* x, const Conv2DShape& shape, int64_t batch, float* col) {
  const int64_t P = shape.out_height(), Q = shape.out_width();
  const int64_t C = shape.in_channels;
  const int64_t tap_row = shape.filter_width * C;  // S*C
  for (int64_t n = 0; n < batch; ++n) {
    const float* image = x + n * shape.height * shape.width * C;
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t q = 0; q < Q; ++q) {
        for (int64_t r = 0; r < shape.filter_height; ++r) {
          const PatchRow row = Locate(shape, p, q, r);
          float* dst = col;
          col += tap_row;
          if (row.empty) {
            std::fill(dst, dst + tap_row, 0.0f);
            continue;
          }
          const float* src = image + (row.h * shape.width + row.w0 + row.s_lo) * C;
          std::fill(dst, dst + row.s_lo * C, 0.0f);
          std::copy(src, src + (row.s_hi - row.s_lo) * C, dst + row.s_lo * C);
          std::fill(dst + row.s_hi * C, dst + tap_row, 0.0f);
        }
      }
    }
  }
}

// The adjoint of Im2Col: dcol is (B*P*Q, R*S*C), dx is (B,H,W,C); each dx
// element receives the sum of the dcol entries that copied it.
void Col2Im(const float* dcol, const Conv2DShape& shape, int64_t batch, float* dx) {
  const int64_t P = shape.out_height(), Q = shape.out_width();
  const int64_t C = shape.in_channels;
  const int64_t tap_row = shape.filter_width * C;
  const int64_t image_size = shape.height * shape.width * C;
  ArrayMap(dx, batch * image_size).setZero();
  for (int64_t n = 0; n < batch; ++n) {
    float* image = dx + n * image_size;
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t q = 0; q < Q; ++q) {
        for (int64_t r = 0; r < shape.filter_height; ++r) {
          const PatchRow row = Locate(shape, p, q, r);
          const float* src = dcol;
          dcol += tap_row;
          if (row.empty) continue;
          const int64_t len = (row.s_hi - row.s_lo) * C;
          ArrayMap(image + (row.h * shape.width + row.w0 + row.s_lo) * C, len) +=
              ConstArrayMap(src + row.s_lo * C, len);
        }
      }
    }
  }
}

int64_t PatchSize(const Conv2DShape& shape) {
  return shape.filter_height * shape.filter_width * shape.in_channels;
}

int64_t OutputPixels(const Conv2DShape& shape, int64_t batch) {
  return batch * shape.out_height() * shape.out_width();
}

// Calls visit(window, out) for every 2x2 window of a (B,H,W,C) image
// (an odd last row or column is in none): window holds the offsets of its
// four pixels in row-major order, each a run of C channels (so a loop over
// channels reads contiguous memory), out the offset of its output pixel in
// (B,H/2,W/2,C).
template <typename Visit>
void ForEach2x2Window(int64_t batch, int64_t height, int64_t width, int64_t C, Visit visit) {
  const int64_t out_h = height / 2, out_w = width / 2;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t i = 0; i < out_h; ++i) {
      for (int64_t j = 0; j < out_w; ++j) {
        const int64_t top_left = ((n * height + 2 * i) * width + 2 * j) * C;
        const int64_t window[4] = {top_left, top_left + C, top_left + width * C,
                                   top_left + width * C + C};
        visit(window, ((n * out_h + i) * out_w + j) * C);
      }
    }
  }
}

}  // namespace

float* CpuKernels::ColumnBuffer(const Conv2DShape& shape, int64_t batch) {
  DCHECK(shape.out_height() > 0 && shape.out_width() > 0);
  const size_t n = OutputPixels(shape, batch) * PatchSize(shape);
  // resize() keeps the capacity: a smaller convolution reallocates nothing.
  if (columns_.size() < n) columns_.resize(n);
  return columns_.data();
}

void CpuKernels::Conv2DForward(const float* x, const float* w, const float* b, float* y,
                               const Conv2DShape& shape, int64_t batch) {
  float* col = ColumnBuffer(shape, batch);
  Im2Col(x, shape, batch, col);
  CpuKernels::MatmulForward(col, w, b, y, OutputPixels(shape, batch), PatchSize(shape),
                            shape.out_channels);
}

void CpuKernels::Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                     const Conv2DShape& shape, int64_t batch) {
  float* dcol = ColumnBuffer(shape, batch);
  CpuKernels::MatmulBackwardInput(dy, w, dcol, OutputPixels(shape, batch), PatchSize(shape),
                                  shape.out_channels);
  Col2Im(dcol, shape, batch, dx);
}

void CpuKernels::Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                       const Conv2DShape& shape, int64_t batch) {
  // Rebuilds the forward pass's im2col matrix rather than keeping it between
  // calls: that would tie this call to the last forward one, and the copy
  // costs little next to the GEMM.
  float* col = ColumnBuffer(shape, batch);
  Im2Col(x, shape, batch, col);
  CpuKernels::MatmulBackwardWeights(col, dy, dw, OutputPixels(shape, batch), PatchSize(shape),
                                    shape.out_channels);
}

void CpuKernels::MaxPool2x2Forward(const float* x, float* y, int32_t* argmax, int64_t batch,
                                   int64_t height, int64_t width, int64_t channels) {
  DCHECK_LT(batch * height * width * channels, int64_t{std::numeric_limits<int32_t>::max()});
  const int64_t C = channels;
  ForEach2x2Window(batch, height, width, C, [&](const int64_t(&window)[4], int64_t out) {
    // Branch-free, so that the compiler vectorizes it over channels.
    for (int64_t c = 0; c < C; ++c) {
      float best = x[window[0] + c];
      int32_t at = static_cast<int32_t>(window[0] + c);
      for (int k = 1; k < 4; ++k) {
        const float value = x[window[k] + c];
        // Strictly greater: the first of tied values wins.
        const bool greater = value > best;
        best = greater ? value : best;
        at = greater ? static_cast<int32_t>(window[k] + c) : at;
      }
      y[out + c] = best;
      argmax[out + c] = at;
    }
  });
}

void CpuKernels::MaxPool2x2Backward(const float* dy, const int32_t* argmax, float* dx,
                                    int64_t batch, int64_t height, int64_t width,
                                    int64_t channels) {
  const int64_t C = channels;
  // An odd last row or column is in no window: its gradient is zero.
  if (height % 2 != 0 || width % 2 != 0) ArrayMap(dx, batch * height * width * C).setZero();
  // Every pixel of a window gets dy where it is the window's argmax, else
  // zero: one pass that writes each element once and vectorizes over
  // channels (the windows do not overlap), instead of zeroing dx and
  // scattering dy.
  ForEach2x2Window(batch, height, width, C, [&](const int64_t(&window)[4], int64_t out) {
    const float* __restrict from = dy + out;
    const int32_t* __restrict at = argmax + out;
    for (int64_t pixel : window) {
      float* __restrict to = dx + pixel;
      const int32_t first = static_cast<int32_t>(pixel);
      for (int64_t c = 0; c < C; ++c) {
        to[c] = at[c] == first + static_cast<int32_t>(c) ? from[c] : 0.0f;
      }
    }
  });
}

}  // namespace pst
