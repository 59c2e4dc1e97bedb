/** Whether ops record the graph. Off inside noGrad() and while backward runs (unless createGraph). */
let enabled = true;

export function isGradEnabled(): boolean {
  return enabled;
}

export function setGradEnabled(value: boolean): void {
  enabled = value;
}

/**
 * Runs fn without recording autograd graphs (torch.no_grad). An async fn keeps grad mode off
 * until its promise settles; JavaScript has no thread-local state, so do not interleave it with
 * other work that needs grad mode on.
 */
export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}

export function enableGrad<T>(fn: () => T): T {
  return withGradMode(true, fn);
}

function withGradMode<T>(value: boolean, fn: () => T): T {
  const previous = enabled;
  enabled = value;
  let result: T;
  try {
    result = fn();
  } catch (err) {
    enabled = previous;
    throw err;
  }
  if (result instanceof Promise) {
    return result.finally(() => {
      enabled = previous;
    }) as T;
  }
  enabled = previous;
  return result;
}
