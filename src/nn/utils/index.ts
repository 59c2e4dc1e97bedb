export { clipGradNorm, clipGradValue, type ClipGradNormOptions } from "./clip_grad.js";
export { parametersToVector, vectorToParameters } from "./vector.js";
