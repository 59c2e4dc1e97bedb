import { noGrad } from "../../autograd/grad_mode.js";
import { cat } from "../../ops/join.js";
import { formatShape } from "../../tensor/shape.js";
import type { Tensor } from "../../tensor/tensor.js";

/** All parameters flattened into one vector (torch.nn.utils.parameters_to_vector). */
export function parametersToVector(parameters: Iterable<Tensor>): Tensor {
  return cat([...parameters].map((p) => p.reshape([-1])), 0);
}

/** Copies slices of a vector into the parameters, in order (torch.nn.utils.vector_to_parameters). */
export function vectorToParameters(vec: Tensor, parameters: Iterable<Tensor>): void {
  const params = [...parameters];
  const total = params.reduce((n, p) => n + p.numel, 0);
  if (vec.ndim !== 1 || vec.numel !== total) {
    throw new RangeError(`vectorToParameters: expected a 1-D vector of ${total} elements (the parameters' total), got ${formatShape(vec.shape)}`);
  }
  noGrad(() => {
    let offset = 0;
    for (const p of params) {
      p.copy_(vec.narrow(0, offset, p.numel).reshape(p.shape));
      offset += p.numel;
    }
  });
}
