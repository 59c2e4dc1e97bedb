/**
 * The primitive kernels every backend provides. A backend is arithmetic over typed arrays:
 * it never sees a Tensor, never allocates, and never validates. `ops/` checks shapes, dtypes and
 * bounds before it calls in (so a native backend can trust its arguments), allocates the output,
 * and composes everything else (losses, attention, …) from these primitives.
 *
 * Conventions:
 * - Lengths and offsets are in elements, not bytes.
 * - "Contiguous" arguments are dense row-major runs starting at the given offset.
 * - A `StridedView` reads element (i0, …, ik) of a logical shape at
 *   `data[offset + i0*strides[0] + … + ik*strides[k]]`; a stride of 0 broadcasts.
 * - Outputs are always contiguous and never alias an input unless a method says so.
 * - bfloat16 is stored as the upper 16 bits of a float32 in a Uint16Array; backends only need
 *   to convert it (`copy`), never compute in it. bool is a Uint8Array of 0/1.
 */

export type DType = "float32" | "float64" | "int32" | "bfloat16" | "bool";
export type FloatDType = "float32" | "float64";
export type TypedArray = Float32Array | Float64Array | Int32Array | Uint16Array | Uint8Array;

export interface StridedView {
  data: TypedArray;
  offset: number;
  strides: readonly number[];
}

/** Elementwise functions of one argument. `p0`/`p1` carry the op's scalar parameters. */
export type UnaryOp =
  | "neg"
  | "abs"
  | "sqrt"
  | "rsqrt"
  | "exp"
  | "log"
  | "tanh"
  | "sigmoid"
  | "relu"
  | "gelu" // exact, with erf
  | "gelu_tanh"
  | "silu"
  | "sign"
  | "reciprocal"
  | "square"
  | "pow_scalar" // x ** p0
  | "clamp" // min(max(x, p0), p1); ±Infinity for an open side
  | "add_scalar" // x + p0
  | "mul_scalar" // x * p0
  | "rsub_scalar" // p0 - x
  | "rdiv_scalar"; // p0 / x

/**
 * The derivative of a unary op applied to an incoming gradient: `out = grad * f'(…)`.
 * Which saved tensor the kernel reads is fixed per op so that autograd keeps only that one:
 * `x` (the input) for relu, gelu, gelu_tanh, silu, abs, pow_scalar, clamp;
 * `y` (the output) for tanh, sigmoid, exp, sqrt, rsqrt, reciprocal.
 */
export type UnaryGradOp =
  | "relu"
  | "gelu"
  | "gelu_tanh"
  | "silu"
  | "abs"
  | "pow_scalar"
  | "clamp"
  | "tanh"
  | "sigmoid"
  | "exp"
  | "sqrt"
  | "rsqrt"
  | "reciprocal";

export type BinaryOp =
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "pow"
  | "maximum"
  | "minimum"
  | "eq"
  | "ne"
  | "lt"
  | "le"
  | "gt"
  | "ge"
  | "logical_and"
  | "logical_or";

export type ReduceOp = "sum" | "max" | "min" | "prod";

/** Transcendental functions of one float argument (std:: semantics: NaN outside the domain). */
export type MathOp = "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "asinh" | "acosh" | "atanh" | "log1p" | "expm1";

/** How scatterReduce combines a source element with the one already at its target. */
export type ScatterOp = "assign" | "sum" | "prod" | "amax" | "amin";

/**
 * One (optionally batched) matrix product `out[b] = alpha * A[b] @ B[b] + beta * out[b]` with
 * A of logical shape [M, K] and B of [K, N]. Each operand is addressed by a row stride and a column
 * stride, one of which is 1 (row-major, or transposed without a copy). The output is contiguous
 * [batch, M, N]. Batch strides may be 0 to broadcast an operand over the batch.
 */
export interface MatmulArgs {
  batch: number;
  m: number;
  n: number;
  k: number;
  a: TypedArray;
  aOffset: number;
  aRowStride: number;
  aColStride: number;
  aBatchStride: number;
  b: TypedArray;
  bOffset: number;
  bRowStride: number;
  bColStride: number;
  bBatchStride: number;
  out: TypedArray;
  outOffset: number;
  alpha: number;
  /** 0 overwrites `out` (its old contents may be garbage, even NaN); 1 accumulates into it. */
  beta: number;
}

export interface AdamArgs {
  n: number;
  param: Float32Array | Float64Array;
  grad: Float32Array | Float64Array;
  expAvg: Float32Array | Float64Array;
  expAvgSq: Float32Array | Float64Array;
  /** Running max of expAvgSq for amsgrad, else null. */
  maxExpAvgSq: Float32Array | Float64Array | null;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** AdamW: decay the parameter directly instead of adding weightDecay*param to the gradient. */
  decoupled: boolean;
  /** The step number after this update (1 on the first step), for bias correction. */
  step: number;
  maximize: boolean;
}

export interface SgdArgs {
  n: number;
  param: Float32Array | Float64Array;
  grad: Float32Array | Float64Array;
  /** Momentum buffer, or null when momentum is 0. */
  momentumBuffer: Float32Array | Float64Array | null;
  /** True on the first step: the buffer is initialised to the gradient instead of updated. */
  firstStep: boolean;
  lr: number;
  momentum: number;
  dampening: number;
  nesterov: boolean;
  weightDecay: number;
  maximize: boolean;
}

/**
 * One 2-d convolution over contiguous NCHW arrays (conv1d is height = kernelH = 1). padH/padW are
 * the top/left pads; the output size (which the ops layer computes) fixes how much of the
 * bottom/right pad is used, so asymmetric padding needs nothing more. Channels split into
 * `groups` equal groups; the weight is [outChannels, inChannels / groups, kernelH, kernelW].
 */
export interface ConvGeometry {
  batch: number;
  inChannels: number;
  height: number;
  width: number;
  outChannels: number;
  outHeight: number;
  outWidth: number;
  kernelH: number;
  kernelW: number;
  strideH: number;
  strideW: number;
  padH: number;
  padW: number;
  dilationH: number;
  dilationW: number;
  groups: number;
}

/** Max pooling over `planes` contiguous [height, width] planes (batch × channels), PyTorch's windows. */
export interface MaxPoolGeometry {
  planes: number;
  height: number;
  width: number;
  outHeight: number;
  outWidth: number;
  kernelH: number;
  kernelW: number;
  strideH: number;
  strideW: number;
  padH: number;
  padW: number;
  dilationH: number;
  dilationW: number;
}

/**
 * Average pooling over separable windows: output (i, j) of each [height, width] plane averages rows
 * [hStart[i], hEnd[i]) and columns [wStart[j], wEnd[j]) and divides by divisors[i * outWidth + j].
 * Plain, count-include-pad, divisor-override and adaptive pooling differ only in these arrays.
 * An empty window gives 0.
 */
export interface AvgPoolWindows {
  planes: number;
  height: number;
  width: number;
  outHeight: number;
  outWidth: number;
  hStart: Int32Array;
  hEnd: Int32Array;
  wStart: Int32Array;
  wEnd: Int32Array;
  divisors: Float64Array;
}

/**
 * One fused attention problem: softmax(scale·q·kᵀ + bias, causal-masked)·v per (n, h) head,
 * q [n, h, l, d], k [n, h, s, d], v [n, h, s, dv]. Each operand is a view whose `strides` are its
 * [n, h, row] strides (the feature axis is contiguous); the bias, when given, has [n, h, i, j]
 * strides over [n, h, l, s] (0 broadcasts). Causal hides key j from query i when j > i. Dropout
 * keeps score (b = n·h index, i, j) when attentionKeep(seed, (b·l + i)·s + j, dropoutP) holds, and
 * scales kept ones by 1/(1 - dropoutP); forward and backward draw the same mask.
 */
export interface AttentionArgs {
  n: number;
  h: number;
  l: number;
  s: number;
  d: number;
  dv: number;
  q: StridedView;
  k: StridedView;
  v: StridedView;
  bias: StridedView | null;
  causal: boolean;
  scale: number;
  dropoutP: number;
  /** The dropout seed as two unsigned 32-bit halves. */
  seedLo: number;
  seedHi: number;
  /**
   * float32 only (autocast): every product's operands (q, k, v, dout, the probabilities, dS) are
   * rounded to bfloat16 and summed in float32; the softmax and the rest stay float32.
   */
  lowPrecision?: boolean;
}

export interface Backend {
  readonly name: string;

  /** out[outOffset .. outOffset+n) = value. */
  fill(out: TypedArray, outOffset: number, n: number, value: number): void;

  /**
   * Gathers a strided view of `shape` into a contiguous `out` starting at outOffset, converting
   * between dtypes if `src.data` and `out` differ (float↔int truncates toward zero as PyTorch;
   * to bfloat16 rounds to nearest even; to bool is `!= 0`).
   */
  copy(src: StridedView, shape: readonly number[], out: TypedArray, outOffset: number): void;

  /** out[i] = op(x[xOffset + i]) for i < n. x and out have the same dtype (float32 or float64). */
  unary(op: UnaryOp, x: TypedArray, xOffset: number, out: TypedArray, n: number, p0?: number, p1?: number): void;

  /** out[i] = grad[i] * op'(saved[i]); `saved` is x or y as listed on UnaryGradOp. */
  unaryGrad(op: UnaryGradOp, grad: TypedArray, saved: TypedArray, savedOffset: number, out: TypedArray, n: number, p0?: number, p1?: number): void;

  /**
   * out = a op b over `shape` (broadcasting through zero strides), written contiguously.
   * a and b share a dtype; out is that dtype, or bool (Uint8Array) for comparisons and logical ops.
   */
  binary(op: BinaryOp, a: StridedView, b: StridedView, shape: readonly number[], out: TypedArray): void;

  /** out = cond ? a : b over `shape`; cond is bool, a and b share out's dtype. */
  where(cond: StridedView, a: StridedView, b: StridedView, shape: readonly number[], out: TypedArray): void;

  /**
   * Reduces the middle axis of a contiguous [outer, size, inner] block into out[outer, inner].
   * For max/min, `indices` (if given) receives the position of the first extreme along the axis
   * (NaN counts as the extreme, as in PyTorch). sum of an empty axis is 0, prod is 1.
   */
  reduce(op: ReduceOp, x: TypedArray, xOffset: number, outer: number, size: number, inner: number, out: TypedArray, indices: Int32Array | null): void;

  matmul(args: MatmulArgs): void;

  /**
   * Mixed precision (what autocast runs): `a` and `b` are float32 or bfloat16 (Uint16Array) and are
   * used rounded to bfloat16; products are accumulated in float32 into `out`, a Float32Array.
   * Same layout rules as `matmul`.
   */
  matmulBf16(args: MatmulArgs): void;

  /** Row-wise softmax (or log_softmax) of a contiguous [rows, cols] block, max-subtracted. */
  softmax(x: TypedArray, xOffset: number, rows: number, cols: number, log: boolean, out: TypedArray): void;

  /**
   * Gradient of softmax (log=false: gradX = y*(g - Σ g*y)) or log_softmax
   * (log=true: gradX = g - exp(y)*Σ g), given the forward output y.
   */
  softmaxBackward(grad: TypedArray, y: TypedArray, rows: number, cols: number, log: boolean, out: TypedArray): void;

  /**
   * Fused cross-entropy of each row r of contiguous logits x [rows, cols] against the int32 class
   * target[targetOffset + r] (a row whose target is ignoreIndex, or outside [0, cols), gets loss 0):
   * loss[r] = (1 − ε)·(−logp_t) + (ε / cols)·(−Σ_j logp_j), logp = log_softmax(x[r]), ε = smoothing.
   * stats[2r] and stats[2r + 1] receive the row's max and log Σ exp(x − max) for the backward.
   */
  crossEntropy(x: TypedArray, xOffset: number, rows: number, cols: number, target: Int32Array, targetOffset: number, ignoreIndex: number, smoothing: number, loss: TypedArray, stats: TypedArray): void;

  /**
   * The logits' gradient from crossEntropy's stats: out[r, j] = scale[r]·(softmax(x[r])_j − ε/cols
   * − (1 − ε)·[j = target_r]), without the target term on an ignored row. out is [rows, cols].
   */
  crossEntropyBackward(
    x: TypedArray,
    xOffset: number,
    rows: number,
    cols: number,
    target: Int32Array,
    targetOffset: number,
    ignoreIndex: number,
    smoothing: number,
    stats: TypedArray,
    scale: TypedArray,
    out: TypedArray,
  ): void;

  /**
   * Layer norm over the last `cols` elements of each row: out = (x-mean)*rstd*w + b. Writes the
   * per-row mean and rstd (1/sqrt(var+eps), biased variance) for the backward.
   */
  layerNorm(
    x: TypedArray,
    rows: number,
    cols: number,
    weight: TypedArray | null,
    bias: TypedArray | null,
    eps: number,
    out: TypedArray,
    mean: TypedArray,
    rstd: TypedArray,
  ): void;

  /** Gradients of layerNorm. gradWeight/gradBias are overwritten (not accumulated) when given. */
  layerNormBackward(
    grad: TypedArray,
    x: TypedArray,
    rows: number,
    cols: number,
    weight: TypedArray | null,
    mean: TypedArray,
    rstd: TypedArray,
    gradX: TypedArray,
    gradWeight: TypedArray | null,
    gradBias: TypedArray | null,
  ): void;

  /**
   * out[o, j, i] = x[o, index[j], i] for a contiguous x of [outer, size, inner] and out of
   * [outer, index.length, inner]. Indices are already bounds-checked.
   */
  indexSelect(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void;

  /** The adjoint of indexSelect: out[o, index[j], i] += grad[o, j, i]; out is not cleared first. */
  indexAdd(grad: TypedArray, outer: number, size: number, inner: number, index: Int32Array, out: TypedArray): void;

  /**
   * out[o, j, i] = x[o, index[o, j, i], i] for contiguous x [outer, size, inner] and index
   * [outer, k, inner] (torch.gather along the middle axis).
   */
  gather(x: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;

  /** The adjoint of gather: out[o, index[o, j, i], i] += src[o, j, i]; out is not cleared first. */
  scatterAdd(src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;

  /**
   * Keeps the lower (upper=false) or upper triangle of each of `batch` contiguous [rows, cols]
   * matrices relative to `diagonal`, zeroing the rest (torch.tril / torch.triu).
   */
  triangle(x: TypedArray, batch: number, rows: number, cols: number, diagonal: number, upper: boolean, out: TypedArray): void;

  /** One fused Adam/AdamW update of a flat parameter, in place on param and the moments. */
  adamStep(args: AdamArgs): void;

  /** One fused SGD update of a flat parameter, in place on param and the momentum buffer. */
  sgdStep(args: SgdArgs): void;

  /** out[i] = op(x[xOffset + i]) for i < n; x and out are float32 or float64 of one dtype. */
  unaryMath(op: MathOp, x: TypedArray, xOffset: number, out: TypedArray, n: number): void;

  /** out[i] = atan2(a[aOffset + i], b[bOffset + i]) over contiguous float runs of one dtype. */
  atan2(a: TypedArray, aOffset: number, b: TypedArray, bOffset: number, out: TypedArray, n: number): void;

  /**
   * Sorts the middle axis of a contiguous [outer, size, inner] block (float32, float64 or int32)
   * into values and int32 indices of the same layout. The sort is stable, and NaN counts as larger
   * than every number (last ascending, first descending), as in PyTorch.
   */
  sort(x: TypedArray, xOffset: number, outer: number, size: number, inner: number, descending: boolean, values: TypedArray, indices: Int32Array): void;

  /**
   * Inclusive running sum (prod=false) or product along the middle axis of a contiguous
   * [outer, size, inner] block into out of the same layout. Floats accumulate in float64 and round
   * each output; int32 wraps on overflow.
   */
  cumulative(prod: boolean, x: TypedArray, xOffset: number, outer: number, size: number, inner: number, out: TypedArray): void;

  /**
   * out[o, index[o, j, i], i] = op(that element, src[o, j, i]) for contiguous src and index
   * [outer, k, inner] and out [outer, size, inner], visiting j in increasing order (so "assign"
   * keeps the last write). amax/amin let NaN win. int32 sums and products wrap.
   */
  scatterReduce(op: ScatterOp, src: TypedArray, outer: number, size: number, inner: number, index: Int32Array, k: number, out: TypedArray): void;

  /** Σ x[i]² over a contiguous run, in float64 (for clipGradNorm). */
  sumSquares(x: TypedArray, xOffset: number, n: number): number;

  /**
   * out [batch, outChannels, outHeight, outWidth] = conv(x, weight) + bias (bias may be null).
   * Every array is float32 or float64 of one dtype, contiguous from index 0.
   */
  conv2d(g: ConvGeometry, x: TypedArray, weight: TypedArray, bias: TypedArray | null, out: TypedArray): void;

  /** The input gradient of conv2d into gradX [batch, inChannels, height, width], overwritten. */
  conv2dBackwardInput(g: ConvGeometry, grad: TypedArray, weight: TypedArray, gradX: TypedArray): void;

  /** The weight and bias gradients of conv2d (either may be null), overwritten. */
  conv2dBackwardWeight(g: ConvGeometry, grad: TypedArray, x: TypedArray, gradWeight: TypedArray | null, gradBias: TypedArray | null): void;

  /**
   * out and indices [planes, outHeight, outWidth]: each window's maximum and its flat position in
   * its plane. NaN counts as the maximum (the last NaN of a window wins), as in PyTorch.
   */
  maxPool2d(g: MaxPoolGeometry, x: TypedArray, out: TypedArray, indices: Int32Array): void;

  /** out [planes, outHeight, outWidth] = the window averages of x [planes, height, width]. */
  avgPool2d(w: AvgPoolWindows, x: TypedArray, out: TypedArray): void;

  /** gradX [planes, height, width] (overwritten): each window's gradient spread evenly over it. */
  avgPool2dBackward(w: AvgPoolWindows, grad: TypedArray, gradX: TypedArray): void;

  /**
   * Per-channel sums of contiguous [n, c, l] arrays, in float64: sumA[ch] = Σ a and
   * sumAB[ch] = Σ a·b (Σ a² when b is null), over n and l.
   */
  channelSums(a: TypedArray, b: TypedArray | null, n: number, c: number, l: number, sumA: Float64Array, sumAB: Float64Array): void;

  /** out = a·sa[ch] + b·sb[ch] + shift[ch] over contiguous [n, c, l] arrays (b and sb null: no b term). */
  channelAffine(a: TypedArray, b: TypedArray | null, n: number, c: number, l: number, sa: Float64Array, sb: Float64Array | null, shift: Float64Array, out: TypedArray): void;

  /**
   * Fused attention forward: out [n, h, l, dv] and lse [n, h, l] (log of each row's softmax
   * denominator, for the backward), both contiguous. A row that sees no key gives NaN, as the
   * composed softmax does.
   */
  attention(args: AttentionArgs, out: TypedArray, lse: TypedArray): void;

  /** Its gradients from out, lse and dout [n, h, l, dv]: dq, dk, dv contiguous, overwritten. */
  attentionBackward(args: AttentionArgs, out: TypedArray, dout: TypedArray, lse: TypedArray, dq: TypedArray, dk: TypedArray, dv: TypedArray): void;
}
