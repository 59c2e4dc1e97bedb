// The five storage dtypes as C++ types, and conversions between them with PyTorch's (and the
// reference backend's) rules: to bfloat16 rounds to nearest even via float32; to int32 truncates
// toward zero and wraps like a JavaScript Int32Array store (NaN and infinities give 0); to bool is
// `!= 0` (NaN is true).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rt {

enum DType : int { kFloat32, kFloat64, kInt32, kBFloat16, kBool, kInvalidDType };

struct BF16 {
  uint16_t bits;
};
struct Bool {
  uint8_t v;
};

inline float Bf16ToFloat(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  // Keep NaN a (quiet) NaN: rounding could carry its payload into the exponent.
  if (f != f) return uint16_t((u >> 16) | 0x0040);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

inline int32_t DoubleToInt32(double d) {
  if (!std::isfinite(d)) return 0;
  double t = std::trunc(d);
  if (t >= -2147483648.0 && t <= 2147483647.0) return int32_t(t);
  t = std::fmod(t, 4294967296.0);
  if (t < 0) t += 4294967296.0;
  return int32_t(uint32_t(t));
}

// Load: the value as the narrowest type that holds it exactly.
inline float Load(float x) { return x; }
inline double Load(double x) { return x; }
inline double Load(int32_t x) { return x; }
inline float Load(BF16 x) { return Bf16ToFloat(x.bits); }
inline float Load(Bool x) { return x.v ? 1.0f : 0.0f; }

template <class D>
struct Store;
template <>
struct Store<float> {
  template <class V>
  static float from(V v) { return float(v); }
};
template <>
struct Store<double> {
  template <class V>
  static double from(V v) { return double(v); }
};
template <>
struct Store<int32_t> {
  template <class V>
  static int32_t from(V v) { return DoubleToInt32(double(v)); }
};
template <>
struct Store<BF16> {
  template <class V>
  static BF16 from(V v) { return BF16{FloatToBf16(float(v))}; }
};
template <>
struct Store<Bool> {
  template <class V>
  static Bool from(V v) { return Bool{uint8_t(v != V(0))}; }
};

inline int ElementSize(int dtype) {
  switch (dtype) {
    case kFloat32: case kInt32: return 4;
    case kFloat64: return 8;
    case kBFloat16: return 2;
    case kBool: return 1;
    default: return 0;
  }
}

}  // namespace rt
