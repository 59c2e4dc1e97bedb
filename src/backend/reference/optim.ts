import type { AdamArgs, SgdArgs } from "../backend.js";

/** torch.optim.Adam / AdamW (single-tensor path), one element at a time. */
export function adamStep(args: AdamArgs): void {
  const { n, param, grad, expAvg, expAvgSq, maxExpAvgSq, lr, beta1, beta2, eps, weightDecay, step } = args;
  const biasCorrection1 = 1 - beta1 ** step;
  const biasCorrection2Sqrt = Math.sqrt(1 - beta2 ** step);
  const stepSize = lr / biasCorrection1;
  for (let i = 0; i < n; i++) {
    let g = args.maximize ? -grad[i] : grad[i];
    if (weightDecay !== 0) {
      if (args.decoupled) param[i] *= 1 - lr * weightDecay;
      else g += weightDecay * param[i];
    }
    expAvg[i] = beta1 * expAvg[i] + (1 - beta1) * g;
    expAvgSq[i] = beta2 * expAvgSq[i] + (1 - beta2) * g * g;
    let second = expAvgSq[i];
    if (maxExpAvgSq) {
      maxExpAvgSq[i] = Math.max(maxExpAvgSq[i], expAvgSq[i]);
      second = maxExpAvgSq[i];
    }
    const denom = Math.sqrt(second) / biasCorrection2Sqrt + eps;
    param[i] -= (stepSize * expAvg[i]) / denom;
  }
}

/**
 * torch.optim.SGD (single-tensor path): maximize negates the gradient before weight decay, so decay
 * still shrinks the parameter; the first step seeds the momentum buffer with the gradient itself.
 */
export function sgdStep(args: SgdArgs): void {
  const { n, param, grad, momentumBuffer, lr, momentum, dampening, weightDecay } = args;
  for (let i = 0; i < n; i++) {
    let d = args.maximize ? -grad[i] : grad[i];
    if (weightDecay !== 0) d += weightDecay * param[i];
    if (momentumBuffer && momentum !== 0) {
      momentumBuffer[i] = args.firstStep ? d : momentum * momentumBuffer[i] + (1 - dampening) * d;
      d = args.nesterov ? d + momentum * momentumBuffer[i] : momentumBuffer[i];
    }
    param[i] -= lr * d;
  }
}
