import type { Backend } from "../backend.js";
import { avgPool2d, avgPool2dBackward, channelAffine, channelSums, conv2d, conv2dBackwardInput, conv2dBackwardWeight, maxPool2d } from "./conv.js";
import { binary, unary, unaryGrad, where } from "./elementwise.js";
import { attention, attentionBackward } from "./attention.js";
import { atan2, cumulative, scatterReduce, sort, unaryMath } from "./extra.js";
import { gather, indexAdd, indexSelect, scatterAdd, triangle } from "./indexing.js";
import { matmul } from "./matmul.js";
import { matmulBf16 } from "./matmul_bf16.js";
import { crossEntropy, crossEntropyBackward } from "./loss.js";
import { layerNorm, layerNormBackward } from "./norm.js";
import { adamStep, sgdStep } from "./optim.js";
import { reduce, sumSquares } from "./reduce.js";
import { softmax, softmaxBackward } from "./softmax.js";
import { copy, fill } from "./strided.js";

/**
 * Plain TypeScript kernels, written to be obviously correct rather than fast: the oracle that the
 * native `cpu` backend is tested against, and the fallback when the addon is not built.
 * Arithmetic runs in float64 and is rounded once when stored into a float32 output.
 */
export const referenceBackend: Backend = {
  name: "reference",
  fill,
  copy,
  unary,
  unaryGrad,
  binary,
  where,
  reduce,
  matmul,
  matmulBf16,
  softmax,
  softmaxBackward,
  crossEntropy,
  crossEntropyBackward,
  layerNorm,
  layerNormBackward,
  indexSelect,
  indexAdd,
  gather,
  scatterAdd,
  triangle,
  adamStep,
  sgdStep,
  sumSquares,
  unaryMath,
  atan2,
  sort,
  cumulative,
  scatterReduce,
  conv2d,
  conv2dBackwardInput,
  conv2dBackwardWeight,
  maxPool2d,
  avgPool2d,
  avgPool2dBackward,
  channelSums,
  channelAffine,
  attention,
  attentionBackward,
};

export { bf16ToFloat, floatToBf16 } from "./convert.js";
