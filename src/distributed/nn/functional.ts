/**
 * Point-to-point communication that autograd sees through (the `torch.distributed.nn.functional`
 * style): a send whose backward is a receive of the gradient, a receive whose backward sends the
 * gradient back. With them a model can be split across ranks by hand and trained with one
 * `loss.backward()` on the last rank and one `token.backward()` on each earlier rank:
 *
 *   // rank 0                                   // rank 1
 *   const h = first.forward(x);                 const h = F.recv([batch, hidden], 0);
 *   const token = F.send(h, 1);                 const loss = lossFn(second.forward(h), y);
 *   token.backward();  // waits for dL/dh       loss.backward();   // sends dL/dh to rank 0
 *
 * Each backward blocks until its peer has answered (within the operation's timeout), so both
 * ranks must run their backward passes; messages between two ranks match in order per tag.
 */
import type { Tensor } from "../../tensor/tensor.js";
import type { DType } from "../../tensor/dtype.js";
import { formatShape } from "../../tensor/shape.js";
import { empty, zeros } from "../../ops/creation.js";
import { contiguous } from "../../ops/view.js";
import { Node } from "../../autograd/node.js";
import { isGradEnabled } from "../../autograd/grad_mode.js";
import { record } from "../../autograd/record.js";
import { checkOptions } from "../../util/options.js";
import { irecv, isend, type P2POptions } from "../point_to_point.js";

export interface AutogradRecvOptions extends P2POptions {
  dtype?: DType;
  /** Whether the result takes part in autograd (default: grad mode is on). */
  requiresGrad?: boolean;
}

const P2P_KEYS = ["group", "tag", "timeoutMs"];

function p2pOf(opts: P2POptions | undefined): P2POptions {
  return { group: opts?.group, tag: opts?.tag, timeoutMs: opts?.timeoutMs };
}

/**
 * Sends `tensor` to rank `dst` and returns a scalar zero that carries the send into the graph:
 * its backward receives d(loss)/d(tensor) from `dst` (sent there by recv's backward) and passes
 * it on into `tensor`'s graph. Call `.backward()` on it, or add it to a loss on this rank.
 */
export function send(tensor: Tensor, dst: number, opts?: P2POptions): Tensor {
  checkOptions("dist.nn.functional.send", opts, P2P_KEYS);
  const data = contiguous(tensor.detach());
  isend(data, dst, p2pOf(opts)).wait();
  const token = zeros([], { dtype: tensor.dtype });
  const shape = tensor.shape;
  return record(token, "SendBackward", [tensor], () => {
    const grad = empty(shape, { dtype: tensor.dtype });
    irecv(grad, dst, p2pOf(opts)).wait();
    return [grad];
  });
}

/**
 * Receives a tensor of `shape` from rank `src` (sent with send above, or a plain dist.send). It
 * requires grad (in grad mode): its backward sends d(loss)/d(result) back to `src`.
 */
export function recv(shape: readonly number[], src: number, opts?: AutogradRecvOptions): Tensor {
  checkOptions("dist.nn.functional.recv", opts, [...P2P_KEYS, "dtype", "requiresGrad"]);
  const out = empty(shape, { dtype: opts?.dtype ?? "float32" });
  irecv(out, src, p2pOf(opts)).wait();
  if (!(opts?.requiresGrad ?? isGradEnabled())) return out;
  // A node with no inputs: the graph ends here on this rank and continues on `src`.
  out.gradFn = new Node("RecvBackward", [], (grad) => {
    if (grad.shape.length !== shape.length || grad.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`RecvBackward: the gradient has shape ${formatShape(grad.shape)}, the received tensor ${formatShape(shape)}`);
    }
    isend(contiguous(grad), src, p2pOf(opts)).wait();
    return [];
  }, []);
  return out;
}
