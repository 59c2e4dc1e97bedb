/** torch.nn.functional under its camelCase names: the ops, plus attention helpers. */
export { linear } from "../ops/linear.js";
export { relu, gelu, tanh, sigmoid, silu } from "../ops/elementwise.js";
export { softmax, logSoftmax } from "../ops/softmax.js";
export { layerNorm } from "../ops/norm.js";
export { embedding } from "../ops/embedding.js";
export { dropout } from "../ops/dropout.js";
export { crossEntropy, mseLoss } from "../ops/loss.js";
export { attentionBias, generateSquareSubsequentMask } from "./attention.js";
export { scaledDotProductAttention, type ScaledDotProductAttentionOptions } from "../ops/attention.js";
export { nllLoss } from "../ops/nll_loss.js";
export { binaryCrossEntropy, binaryCrossEntropyWithLogits, logSigmoid } from "../ops/binary_cross_entropy.js";
export { oneHot } from "../ops/one_hot.js";
export { pad } from "../ops/pad.js";
export { conv1d, conv2d } from "../ops/conv.js";
export { maxPool2d, avgPool2d, adaptiveAvgPool2d } from "../ops/pool.js";
export { batchNorm } from "../ops/batch_norm.js";
export { groupNorm } from "../ops/group_norm.js";
