#pragma once
// Kernels of the grouped reductions of ember._ops_grouped (histogramdd), bound
// as private functions of ember._C.

#include <optional>
#include <vector>

#include "ember/core/Macros.h"
#include "ember/ops/Tensor.h"

namespace ember::native {

// The histogram of the rows of points (N x D, float or double): bin k of
// dimension d is [edges[d][k], edges[d][k + 1]), the last one closed; rows
// outside the edges are left out. Each row adds 1, or its weight (N values),
// in points' dtype. The result has the shape of the bin counts. linear: the
// edges are evenly spaced (made from bin counts), which PyTorch bins by
// division and a look at the neighbouring edges.
EMBER_API Tensor histogramdd_counts(const Tensor& points, const std::vector<Tensor>& edges,
                                    const std::optional<Tensor>& weight, bool linear);

// The min (row 0) and max (row 1) of every column of points (N > 0 rows,
// float or double); a column with a NaN gives NaN, as aminmax does.
EMBER_API Tensor histogramdd_extremes(const Tensor& points);

// Segment id of every position p < size along the last dim, per row of
// bounds (segment boundaries, ..., segments + 1): the last boundary at or
// below p, less one, clamped to the segments (searchsorted's right side).
EMBER_API Tensor segment_ids(const Tensor& bounds, int64_t size);

}  // namespace ember::native
