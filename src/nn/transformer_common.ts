import type { DType } from "../tensor/dtype.js";
import type { Generator } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { gelu, relu } from "../ops/elementwise.js";
import { ModuleList } from "./containers.js";
import { deepCopy } from "./copy.js";
import { Module } from "./module.js";
import { checkArity, checkOptions } from "../util/options.js";

/** "relu", "gelu", a function of a tensor, or a Module (which is then registered as a submodule). */
export type Activation = "relu" | "gelu" | ((x: Tensor) => Tensor) | Module;

export interface TransformerLayerOptions {
  dimFeedforward?: number;
  dropout?: number;
  activation?: Activation;
  layerNormEps?: number;
  batchFirst?: boolean;
  /** Pre-norm (LayerNorm before attention and feed-forward) instead of PyTorch's default post-norm. */
  normFirst?: boolean;
  bias?: boolean;
  dtype?: DType;
  generator?: Generator;
}

export const LAYER_OPTIONS = ["dimFeedforward", "dropout", "activation", "layerNormEps", "batchFirst", "normFirst", "bias", "dtype", "generator"];

/** Checks a layer constructor's arguments: (dModel, nhead, options) with known option keys. */
export function checkLayerArguments(where: string, args: IArguments, options: unknown): void {
  checkArity(where, args, 3, `new nn.${where}(dModel, nhead, { dimFeedforward, dropout, activation, batchFirst, normFirst, … })`);
  checkOptions(where, options, LAYER_OPTIONS);
}

/** Checks a stack's arguments: (layer, numLayers, { norm }). */
export function checkStackArguments(where: string, args: IArguments, options: unknown): void {
  checkArity(where, args, 3, `new nn.${where}(layer, numLayers, { norm })`);
  checkOptions(where, options, ["norm"]);
}

/** The activation as PyTorch stores it: a plain function for a name, the module itself otherwise. */
/** The "gelu" activation: one shared function, so that DataParallel's replicas can name it. */
export const geluActivation = (x: Tensor): Tensor => gelu(x);

export function resolveActivation(activation: Activation | undefined): ((x: Tensor) => Tensor) | Module {
  if (activation === undefined || activation === "relu") return relu;
  if (activation === "gelu") return geluActivation;
  if (typeof activation === "function" || activation instanceof Module) return activation;
  throw new TypeError(`transformer layer: activation must be "relu", "gelu", a function or a Module, got ${JSON.stringify(activation)}`);
}

export function applyActivation(activation: ((x: Tensor) => Tensor) | Module, x: Tensor): Tensor {
  return activation instanceof Module ? (activation.call(x) as Tensor) : activation(x);
}

/** numLayers copies of a layer with identical initial weights, as PyTorch's _get_clones makes them. */
export function cloneLayers<L extends Module>(layer: L, numLayers: number, what: string): ModuleList<L> {
  if (!Number.isInteger(numLayers) || numLayers < 1) throw new RangeError(`${what}: numLayers must be a positive integer, got ${numLayers}`);
  return new ModuleList(Array.from({ length: numLayers }, () => deepCopy(layer)));
}
