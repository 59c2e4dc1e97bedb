// Everything compiled once per instruction set. Included by isa_portable.cc, isa_avx2.cc and
// isa_avx512.cc inside their own namespace (so no inline function or template instantiation
// compiled for one ISA can be merged by the linker with another's) after their simd_*.h.

#include "vmath.inl"
#include "unary.inl"
#include "binary.inl"
#include "reduce.inl"
#include "norm.inl"
#include "loss.inl"
#include "optim.inl"
#include "gemm.inl"

template <class S, class G>
constexpr TypedKernels<typename S::T> MakeKernels() {
  using T = typename S::T;
  return TypedKernels<T>{
      &G::run,          G::kMR,          G::kNR,
      &unary<S>,        &unary_grad<S>,  &binary<S>,
      &compare<S>,      &reduce<T>,      &softmax<S>,
      &softmax_backward<S>, &layer_norm<S>, &layer_norm_backward_x<S>,
      &layer_norm_backward_w<S>, &adam<S>, &sgd<S>,
      &sum_squares<T>,  &cross_entropy<S>, &cross_entropy_backward<S>,
  };
}
