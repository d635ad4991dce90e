//===- RangeSelectionTest.cpp - calibration range methods -----------------===//
//
// Each method on data whose right answer is known in closed form: normal and
// uniform samples, one-sided (after a Relu) and two-sided.
//
//===----------------------------------------------------------------------===//

#include "dlc/Quantization/Quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace dlc;

namespace {

TensorStatistics observe(const std::vector<float> &values) {
  TensorStatistics s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  s.histogram.assign(TensorStatistics::kHistogramBins, 0.0);
  double a = s.absMax();
  if (a <= 0)
    return s;
  for (float v : values) {
    int bin =
        static_cast<int>((v + a) * TensorStatistics::kHistogramBins / (2 * a));
    ++s.histogram[std::clamp(bin, 0, TensorStatistics::kHistogramBins - 1)];
  }
  return s;
}

std::vector<float> normal(size_t n, bool relu) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = relu ? std::max(0.0f, dist(rng)) : dist(rng);
  return v;
}

CalibrationMethodSpec method(CalibrationMethod kind, double p = 99.99) {
  CalibrationMethodSpec m;
  m.kind = kind;
  m.percentile = p;
  return m;
}

TEST(RangeSelection, MinMaxIsTheObservedRangeWithZero) {
  TensorStatistics s = observe({1.0f, 2.0f, 3.0f});
  auto [lo, hi] = chooseRange(s, method(CalibrationMethod::MinMax));
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 3.0);
}

TEST(RangeSelection, AllZerosGetsANonEmptyRange) {
  TensorStatistics s = observe({0.0f, 0.0f});
  for (auto kind : {CalibrationMethod::MinMax, CalibrationMethod::Percentile,
                    CalibrationMethod::Entropy, CalibrationMethod::MSE}) {
    auto [lo, hi] = chooseRange(s, method(kind));
    EXPECT_LT(lo, hi);
  }
}

TEST(RangeSelection, PercentileCutsBothTails) {
  // Uniform on [-1, 1]: keeping 98% leaves 1% out on each side.
  std::vector<float> v;
  for (int i = 0; i <= 200000; ++i)
    v.push_back(-1.0f + 2.0f * i / 200000);
  auto [lo, hi] =
      chooseRange(observe(v), method(CalibrationMethod::Percentile, 98));
  EXPECT_NEAR(lo, -0.98, 0.002);
  EXPECT_NEAR(hi, 0.98, 0.002);
}

TEST(RangeSelection, PercentileOfAOneSidedTensorCutsTheTopOnly) {
  std::vector<float> v;
  for (int i = 0; i <= 100000; ++i)
    v.push_back(1.0f * i / 100000);
  auto [lo, hi] =
      chooseRange(observe(v), method(CalibrationMethod::Percentile, 99));
  EXPECT_EQ(lo, 0.0);
  EXPECT_NEAR(hi, 0.99, 0.002);
}

TEST(RangeSelection, EntropyKeepsTheBulkOfANormal) {
  // At 8 bits the KL threshold of a normal distribution lies several
  // standard deviations out (at most the largest of a million samples,
  // ~5); a Relu's spike at zero must not pull it into the bulk.
  for (bool relu : {false, true}) {
    TensorStatistics s = observe(normal(1000000, relu));
    auto [lo, hi] = chooseRange(s, method(CalibrationMethod::Entropy));
    EXPECT_GT(hi, 2.5) << "relu " << relu;
    EXPECT_LE(hi, s.max) << "relu " << relu;
    if (relu)
      EXPECT_EQ(lo, 0.0);
    else
      EXPECT_LT(lo, -2.5);
  }
}

TEST(RangeSelection, EntropyClipsAFarOutlier) {
  std::vector<float> v = normal(1000000, true);
  v.push_back(50.0f);
  auto [lo, hi] = chooseRange(observe(v), method(CalibrationMethod::Entropy));
  EXPECT_EQ(lo, 0.0);
  EXPECT_GT(hi, 2.5);
  EXPECT_LT(hi, 10.0);
}

TEST(RangeSelection, EntropyOfFewValuesKeepsTheirRange) {
  // 160 values (ten logits of sixteen samples) cannot say where a tail
  // starts.
  std::vector<float> v = normal(160, false);
  TensorStatistics s = observe(v);
  auto [lo, hi] = chooseRange(s, method(CalibrationMethod::Entropy));
  EXPECT_GE(hi, 0.95 * s.max);
  EXPECT_LE(lo, 0.95 * s.min);
}

TEST(RangeSelection, MSEBeatsMinMaxOnAHeavyTail) {
  // A normal bulk and one far outlier: the MSE range gives up the outlier.
  std::vector<float> v = normal(200000, false);
  v.push_back(40.0f);
  TensorStatistics s = observe(v);
  auto [lo, hi] = chooseRange(s, method(CalibrationMethod::MSE));
  EXPECT_LT(hi, 34.0); // clipping 40 to ~31 costs less than its step size
  EXPECT_GT(hi, 3.0);
  EXPECT_LT(lo, -2.5);
}

// Per-channel encodings share one zero point: every channel's range stays
// representable, one-sided channels (after a Relu) get zero point 0, and
// mostly positive channels pull it below the middle.
TEST(RangeSelection, ChannelEncodingsShareAZeroPoint) {
  Encoding relu = uint8ChannelEncoding({0, 0, 0, 0}, {6, 0.5, 0, 1});
  EXPECT_EQ(relu.zeroPoint, 0);
  ASSERT_EQ(relu.channelScales.size(), 4u);
  EXPECT_DOUBLE_EQ(relu.channelScales[0], 6.0 / 255);
  EXPECT_DOUBLE_EQ(relu.channelScales[1], 0.5 / 255);
  // A channel that was always 0 takes the median step.
  EXPECT_DOUBLE_EQ(relu.channelScales[2], 1.0 / 255);
  EXPECT_DOUBLE_EQ(relu.scale, 6.0 / 255);

  // Hardswish-like channels reach -0.375 below 0 and far more above; two
  // closer to symmetric among them.
  std::vector<double> lo = {-0.375, -0.375, -0.3, -0.375, -4};
  std::vector<double> hi = {8, 3, 0.6, 12, 4};
  Encoding e = uint8ChannelEncoding(lo, hi);
  EXPECT_GT(e.zeroPoint, 0);
  EXPECT_LT(e.zeroPoint, 128);
  for (size_t c = 0; c < lo.size(); ++c) {
    double s = e.channelScales[c];
    EXPECT_LE(-e.zeroPoint * s, lo[c] * (1 - 1e-12)) << "channel " << c;
    EXPECT_GE((255 - e.zeroPoint) * s, hi[c] * (1 - 1e-12)) << "channel " << c;
  }
  // Never all negative: zero point 255.
  EXPECT_EQ(uint8ChannelEncoding({-1, -2}, {0, 0}).zeroPoint, 255);
}

TEST(RangeSelection, ParsesMethods) {
  std::string error;
  auto p = parseCalibrationMethod("percentile:99.9", error);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, CalibrationMethod::Percentile);
  EXPECT_DOUBLE_EQ(p->percentile, 99.9);
  EXPECT_TRUE(parseCalibrationMethod("entropy", error));
  EXPECT_FALSE(parseCalibrationMethod("percentile:40", error));
  EXPECT_NE(error.find("(50, 100]"), std::string::npos);
  EXPECT_FALSE(parseCalibrationMethod("mse:3", error));
  EXPECT_FALSE(parseCalibrationMethod("kl", error));
  EXPECT_NE(error.find("unknown method"), std::string::npos);
}

} // namespace
