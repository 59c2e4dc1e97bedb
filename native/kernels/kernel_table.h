// The contract between the ISA-independent code (threading, strides, N-API) and the kernels
// compiled once per instruction set (isa_portable.cc, isa_avx2.cc, isa_avx512.cc). Each ISA file
// fills one KernelTable; dispatch.cc picks the table the CPU supports.
#pragma once
#include <cstdint>

namespace rt {

// Op codes shared with src/backend/cpu/opcodes.ts: keep both lists in the same order.
enum UnaryCode : int {
  kNeg, kAbs, kSqrt, kRsqrt, kExp, kLog, kTanh, kSigmoid, kRelu, kGelu, kGeluTanh, kSilu, kSign,
  kReciprocal, kSquare, kPowScalar, kClamp, kAddScalar, kMulScalar, kRsubScalar, kRdivScalar,
  kUnaryCount
};
enum UnaryGradCode : int {
  kGradRelu, kGradGelu, kGradGeluTanh, kGradSilu, kGradAbs, kGradPowScalar, kGradClamp, kGradTanh,
  kGradSigmoid, kGradExp, kGradSqrt, kGradRsqrt, kGradReciprocal, kUnaryGradCount
};
enum BinaryCode : int {
  kAdd, kSub, kMul, kDiv, kPow, kMaximum, kMinimum,
  // Comparisons and logical ops write bool (uint8).
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kBinaryCount
};
inline bool IsCompare(int op) { return op >= kEq; }
enum ReduceCode : int { kSum, kMax, kMin, kProd, kReduceCount };

template <class T>
struct GemmProblem {
  int64_t m, n, k;
  const T* a;
  int64_t rsa, csa;
  const T* b;
  int64_t rsb, csb;
  T* c;
  int64_t ldc;
  T alpha, beta;
};

struct AdamParams {
  double lr, beta1, beta2, eps, weight_decay;
  double step_size;       // lr / (1 - beta1^step)
  double bias2_sqrt;      // sqrt(1 - beta2^step)
  bool decoupled, amsgrad, maximize;
};

struct SgdParams {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first_step, has_buffer;
};

template <class T>
struct TypedKernels {
  // One matrix, on the calling thread; k > 0 (the caller handles k == 0).
  void (*gemm)(const GemmProblem<T>& p);
  int gemm_mr, gemm_nr;
  void (*unary)(int op, const T* x, T* out, int64_t n, T p0, T p1);
  void (*unary_grad)(int op, const T* grad, const T* saved, T* out, int64_t n, T p0, T p1);
  // One run of n outputs; sa/sb are element strides (0 broadcasts, 1 is contiguous).
  void (*binary)(int op, const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n);
  void (*compare)(int op, const T* a, int64_t sa, const T* b, int64_t sb, uint8_t* out, int64_t n);
  void (*reduce)(int op, const T* x, int64_t outer, int64_t size, int64_t inner, T* out, int32_t* indices);
  void (*softmax)(const T* x, T* out, int64_t rows, int64_t cols, bool log);
  void (*softmax_backward)(const T* grad, const T* y, T* out, int64_t rows, int64_t cols, bool log);
  void (*layer_norm)(const T* x, int64_t rows, int64_t cols, const T* w, const T* b, T eps, T* out, T* mean, T* rstd);
  // gradX for rows [0, rows) of the arguments.
  void (*layer_norm_backward_x)(const T* grad, const T* x, int64_t rows, int64_t cols, const T* w, const T* mean,
                                const T* rstd, T* grad_x);
  // gradWeight/gradBias (either may be null) for columns [c0, c1), summed over all rows.
  void (*layer_norm_backward_w)(const T* grad, const T* x, int64_t rows, int64_t cols, int64_t c0, int64_t c1,
                                const T* mean, const T* rstd, T* grad_w, T* grad_b);
  void (*adam)(const AdamParams& p, T* param, const T* grad, T* m, T* v, T* max_v, int64_t n);
  void (*sgd)(const SgdParams& p, T* param, const T* grad, T* buf, int64_t n);
  double (*sum_squares)(const T* x, int64_t n);
  // Fused cross-entropy over contiguous [rows, cols] logits (loss.inl).
  void (*cross_entropy)(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore, T smoothing,
                        T* loss, T* stats);
  void (*cross_entropy_backward)(const T* x, int64_t rows, int64_t cols, const int32_t* target, int32_t ignore,
                                 T smoothing, const T* stats, const T* scale, T* out);
};

struct KernelTable {
  const char* name;
  TypedKernels<float> f32;
  TypedKernels<double> f64;
  template <class T>
  const TypedKernels<T>& get() const;
};
template <>
inline const TypedKernels<float>& KernelTable::get<float>() const { return f32; }
template <>
inline const TypedKernels<double>& KernelTable::get<double>() const { return f64; }

const KernelTable* PortableKernels();
const KernelTable* Avx2Kernels();    // null when not compiled for x86-64
const KernelTable* Avx512Kernels();  // null when not compiled for x86-64

}  // namespace rt
