// Elementwise reductions and conversions for collectives. Plain loops: -O3 vectorises them, and
// the work is bound by memory bandwidth, not arithmetic.
#include <cmath>
#include <cstring>

#include "comm/comm.h"

namespace rtcomm {

size_t DTypeSize(int dtype) {
  switch (dtype) {
    case kF32:
    case kI32:
      return 4;
    case kF64:
      return 8;
    case kBF16:
    case kF16:
      return 2;
    default:
      return 1;
  }
}

// Min and max propagate NaN (as torch does) and give the same bits whichever operand comes first.
template <typename T>
static inline T MaxOf(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}
template <typename T>
static inline T MinOf(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}

template <typename T>
static void ReduceFloat(int op, T* d, const T* a, const T* b, size_t n) {
  switch (op) {
    case kSum:
      for (size_t i = 0; i < n; i++) d[i] = a[i] + b[i];
      break;
    case kProd:
      for (size_t i = 0; i < n; i++) d[i] = a[i] * b[i];
      break;
    case kMin:
      for (size_t i = 0; i < n; i++) d[i] = MinOf(a[i], b[i]);
      break;
    case kMax:
      for (size_t i = 0; i < n; i++) d[i] = MaxOf(a[i], b[i]);
      break;
  }
}

// Integer sums and products wrap around, as int32 arithmetic does in torch.
static void ReduceInt(int op, int32_t* d, const int32_t* a, const int32_t* b, size_t n) {
  switch (op) {
    case kSum:
      for (size_t i = 0; i < n; i++) d[i] = int32_t(uint32_t(a[i]) + uint32_t(b[i]));
      break;
    case kProd:
      for (size_t i = 0; i < n; i++) d[i] = int32_t(uint32_t(a[i]) * uint32_t(b[i]));
      break;
    case kMin:
      for (size_t i = 0; i < n; i++) d[i] = a[i] < b[i] ? a[i] : b[i];
      break;
    case kMax:
      for (size_t i = 0; i < n; i++) d[i] = a[i] > b[i] ? a[i] : b[i];
      break;
  }
}

static inline float Bf16ToFloat(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return uint16_t(bits >> 16);
}

static inline float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0 && mant == 0) {
    bits = sign;
  } else if (exp == 0) {  // subnormal: shift the mantissa up to an implicit leading 1
    int shifts = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      shifts++;
    }
    bits = sign | (uint32_t(127 - 14 - shifts) << 23) | ((mant & 0x3ffu) << 13);
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN stays a quiet NaN
  if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // 65520 and up round to infinity
  if (mag < 0x38800000u) {                                  // below 2^-14: a subnormal half, or zero
    float a;
    memcpy(&a, &mag, 4);
    return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));  // exact scaling, then ties to even
  }
  uint32_t bits = mag - (112u << 23);        // rebias the exponent from 127 to 15
  bits += 0xfffu + ((bits >> 13) & 1u);      // round the mantissa to 10 bits, ties to even
  return uint16_t(sign | (bits >> 13));
}

// Reductions of 16-bit floats compute each element in float32 and round once per hop.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
static void Reduce16(int op, uint16_t* d, const uint16_t* x, const uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float u = ToFloat(x[i]), v = ToFloat(y[i]), r = 0;
    switch (op) {
      case kSum: r = u + v; break;
      case kProd: r = u * v; break;
      case kMin: r = MinOf(u, v); break;
      case kMax: r = MaxOf(u, v); break;
    }
    d[i] = FromFloat(r);
  }
}

void Reduce(int dtype, int op, void* dst, const void* a, const void* b, size_t n) {
  switch (dtype) {
    case kF32:
      return ReduceFloat(op, static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n);
    case kF64:
      return ReduceFloat(op, static_cast<double*>(dst), static_cast<const double*>(a), static_cast<const double*>(b), n);
    case kI32:
      return ReduceInt(op, static_cast<int32_t*>(dst), static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), n);
    case kBF16:
      return Reduce16<Bf16ToFloat, FloatToBf16>(op, static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), n);
    case kF16:
      return Reduce16<HalfToFloat, FloatToHalf>(op, static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), n);
  }
}

template <typename T>
static void SumDivide(T* d, const T* a, const T* b, size_t n, T divisor) {
  for (size_t i = 0; i < n; i++) d[i] = (a[i] + b[i]) / divisor;
}

void ReduceDivide(int dtype, int op, void* dst, const void* a, const void* b, size_t n, double divisor) {
  if (divisor == 1) return Reduce(dtype, op, dst, a, b, n);
  // Floating sums, the case of every average that matters for speed, divide in the same pass;
  // the result is bit-identical to summing and then dividing.
  if (op == kSum && dtype == kF32) {
    return SumDivide(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n, float(divisor));
  }
  if (op == kSum && dtype == kF64) {
    return SumDivide(static_cast<double*>(dst), static_cast<const double*>(a), static_cast<const double*>(b), n, divisor);
  }
  Reduce(dtype, op, dst, a, b, n);
  DivideBy(dtype, dst, n, divisor);
}

void Bf16ToF32(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = Bf16ToFloat(src[i]);
}

void F32ToBf16(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = FloatToBf16(src[i]);
}

void F16ToF32(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = HalfToFloat(src[i]);
}

void F32ToF16(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = FloatToHalf(src[i]);
}

void DivideBy(int dtype, void* buf, size_t n, double divisor) {
  switch (dtype) {
    case kF32: {
      auto* p = static_cast<float*>(buf);
      float d = float(divisor);
      for (size_t i = 0; i < n; i++) p[i] /= d;
      return;
    }
    case kF64: {
      auto* p = static_cast<double*>(buf);
      for (size_t i = 0; i < n; i++) p[i] /= divisor;
      return;
    }
    case kI32: {
      // Truncating division, as NCCL's AVG does for integers.
      auto* p = static_cast<int32_t*>(buf);
      int32_t d = int32_t(divisor);
      for (size_t i = 0; i < n; i++) p[i] /= d;
      return;
    }
    case kBF16: {
      auto* p = static_cast<uint16_t*>(buf);
      for (size_t i = 0; i < n; i++) p[i] = FloatToBf16(float(Bf16ToFloat(p[i]) / divisor));
      return;
    }
    case kF16: {
      auto* p = static_cast<uint16_t*>(buf);
      for (size_t i = 0; i < n; i++) p[i] = FloatToHalf(float(HalfToFloat(p[i]) / divisor));
      return;
    }
  }
}

}  // namespace rtcomm
