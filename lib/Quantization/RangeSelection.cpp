//===- RangeSelection.cpp - clipping ranges from calibration statistics ---===//
//
// Each method turns what calibration saw of a tensor (its extremes and a
// histogram over [-absMax, absMax]) into the range [lo, hi] that the
// tensor's 8-bit encoding spans. A narrower range than [min, max] trades
// clipping of rare large values for finer steps on the common ones.
//
//===----------------------------------------------------------------------===//

#include "dlc/Quantization/Quantize.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace dlc;

std::optional<CalibrationMethodSpec>
dlc::parseCalibrationMethod(llvm::StringRef spec, std::string &error) {
  auto [name, argument] = spec.split(':');
  CalibrationMethodSpec method;
  method.spelling = spec.str();
  if (name == "percentile") {
    method.kind = CalibrationMethod::Percentile;
    if (!argument.empty() &&
        (!llvm::to_float(argument, method.percentile) ||
         !(method.percentile > 50) || !(method.percentile <= 100))) {
      error = "--calibration-method=percentile:" + argument.str() +
              ": the percentile must be a number in (50, 100]";
      return std::nullopt;
    }
    return method;
  }
  if (!argument.empty() || spec.contains(':')) {
    error = "--calibration-method=" + spec.str() +
            ": only percentile takes a value (percentile:99.99)";
    return std::nullopt;
  }
  if (name == "minmax")
    method.kind = CalibrationMethod::MinMax;
  else if (name == "entropy")
    method.kind = CalibrationMethod::Entropy;
  else if (name == "mse")
    method.kind = CalibrationMethod::MSE;
  else {
    error = "--calibration-method=" + spec.str() +
            ": unknown method; choose minmax, percentile[:P], entropy or mse";
    return std::nullopt;
  }
  return method;
}

namespace {

using Range = std::pair<double, double>;

/// The range with 0 in it; an empty one becomes [0, 1] so that the scale
/// is never zero (the tensor is then all zeros and any scale is exact).
Range withZero(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (hi - lo <= 0)
    return {0.0, 1.0};
  return {lo, hi};
}

double lowerEdge(const TensorStatistics &s, int bin) {
  return -s.absMax() + bin * s.binWidth();
}

/// The values at the `lowShare` and `1 - highShare` quantiles, read from
/// the histogram at bin edges (so that the range covers the bin it ends
/// in).
Range quantiles(const TensorStatistics &s, double lowShare, double highShare) {
  double total = 0;
  for (double c : s.histogram)
    total += c;
  if (total <= 0)
    return {s.min, s.max};
  int n = TensorStatistics::kHistogramBins;
  double seen = 0;
  int loBin = 0;
  for (; loBin < n; ++loBin) {
    if (seen + s.histogram[loBin] > lowShare * total)
      break;
    seen += s.histogram[loBin];
  }
  seen = 0;
  int hiBin = n - 1;
  for (; hiBin >= 0; --hiBin) {
    if (seen + s.histogram[hiBin] > highShare * total)
      break;
    seen += s.histogram[hiBin];
  }
  double lo = std::max(s.min, lowerEdge(s, loBin));
  double hi = std::min(s.max, lowerEdge(s, hiBin + 1));
  return {std::min(lo, hi), hi};
}

/// Kullback-Leibler divergence threshold on the histogram of |x|: the
/// candidate threshold's histogram (values beyond it clipped into the last
/// bin) against the same histogram merged into `levels` steps and spread
/// back over the bins that held values.
double entropyThreshold(const std::vector<double> &absHist, int levels) {
  int m = static_cast<int>(absHist.size());
  if (m <= levels)
    return m;
  std::vector<double> suffix(m + 1, 0.0);
  for (int i = m - 1; i >= 0; --i)
    suffix[i] = suffix[i + 1] + absHist[i];
  double bestKL = std::numeric_limits<double>::infinity();
  int best = m;
  std::vector<double> q;
  for (int i = levels; i <= m; ++i) {
    // Reference: the first i bins, the clipped tail in the last of them.
    double total = suffix[0];
    if (total <= 0)
      return m;
    q.assign(i, 0.0);
    for (int k = 0; k < levels; ++k) {
      int begin = static_cast<int>(static_cast<int64_t>(k) * i / levels);
      int end = static_cast<int>(static_cast<int64_t>(k + 1) * i / levels);
      double sum = 0;
      int used = 0;
      for (int b = begin; b < end; ++b) {
        sum += absHist[b];
        used += absHist[b] > 0;
      }
      for (int b = begin; b < end; ++b)
        q[b] = absHist[b] > 0 ? sum / used : 0.0;
    }
    double qTotal = 0;
    for (int b = 0; b < i; ++b)
      qTotal += q[b];
    // The clipped tail is part of the reference only.
    double kl = 0;
    for (int b = 0; b < i; ++b) {
      double p = absHist[b] + (b == i - 1 ? suffix[i] : 0.0);
      if (p <= 0)
        continue;
      double pn = p / total;
      double qn = q[b] / std::max(qTotal, 1e-300);
      kl += pn * std::log(pn / std::max(qn, 1e-12));
    }
    if (kl < bestKL) {
      bestKL = kl;
      best = i;
    }
  }
  return best;
}

/// The expected squared error of quantizing the histogram's values to
/// `levels` steps over [lo, hi] (values at their bin centres).
double squaredError(const TensorStatistics &s, Range range, int levels) {
  double scale = (range.second - range.first) / (levels - 1);
  double zero = std::nearbyint(-range.first / scale);
  double error = 0;
  double width = s.binWidth();
  for (int b = 0; b < TensorStatistics::kHistogramBins; ++b) {
    double count = s.histogram[b];
    if (count <= 0)
      continue;
    double v = lowerEdge(s, b) + width / 2;
    double q = std::clamp(std::nearbyint(v / scale) + zero, 0.0,
                          static_cast<double>(levels - 1));
    double d = (q - zero) * scale - v;
    error += count * d * d;
  }
  return error;
}

} // namespace

std::pair<double, double> dlc::chooseRange(const TensorStatistics &stats,
                                           const CalibrationMethodSpec &method,
                                           int levels) {
  Range full = withZero(stats.min, stats.max);
  if (method.kind == CalibrationMethod::MinMax || stats.histogram.empty() ||
      stats.absMax() <= 0)
    return full;
  switch (method.kind) {
  case CalibrationMethod::MinMax:
    return full;
  case CalibrationMethod::Percentile: {
    double outside = (100.0 - method.percentile) / 100.0;
    // One-sided tensors (after a Relu) lose their share at the top only.
    Range r = stats.min >= 0 ? quantiles(stats, 0.0, outside)
                             : quantiles(stats, outside / 2, outside / 2);
    return withZero(r.first, r.second);
  }
  case CalibrationMethod::Entropy: {
    int half = TensorStatistics::kHistogramBins / 2;
    std::vector<double> absHist(half);
    for (int j = 0; j < half; ++j)
      absHist[j] = stats.histogram[half + j] + stats.histogram[half - 1 - j];
    // The bin at zero holds every value a Relu zeroed; spread over a whole
    // step, that spike would dominate the divergence and pull the threshold
    // in. It is counted like its neighbour instead.
    if (half > 1)
      absHist[0] = absHist[1];
    // A one-sided tensor spends all steps on [0, t]; a two-sided one half
    // on each side.
    bool oneSided = stats.min >= 0;
    int steps = oneSided ? levels : levels / 2;
    // The divergence means something only where the histogram does: with
    // few values (a classifier's logits over a few samples) most bins are
    // empty and the threshold lands anywhere. Bins are merged in powers of
    // two until they hold 16 values on average, down to one bin per step
    // (which keeps the whole range).
    double total = 0;
    for (double c : absHist)
      total += c;
    int merge = 1;
    while (half / merge > steps && total / (half / merge) < 16)
      merge *= 2;
    std::vector<double> merged(half / merge, 0.0);
    for (int j = 0; j < half; ++j)
      merged[j / merge] += absHist[j];
    double t = entropyThreshold(merged, steps) * stats.binWidth() * merge;
    return withZero(std::max(stats.min, -t), std::min(stats.max, t));
  }
  case CalibrationMethod::MSE: {
    // Coordinate descent: the best upper end for the current lower end,
    // then the best lower end for that, a few times (each end on a grid of
    // 1% of its min-max value).
    Range best = full;
    double bestError = squaredError(stats, full, levels);
    for (int round = 0; round < 3; ++round) {
      for (int end = 0; end < 2; ++end) {
        Range start = best;
        for (int step = 1; step < 100; ++step) {
          double shrink = step / 100.0;
          Range r = start;
          (end ? r.first : r.second) =
              (end ? full.first : full.second) * shrink;
          if (r.second - r.first <= 0)
            continue;
          double e = squaredError(stats, r, levels);
          if (e < bestError) {
            bestError = e;
            best = r;
          }
        }
      }
    }
    return best;
  }
  }
  return full;
}
