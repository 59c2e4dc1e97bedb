/**
 * Runs fn and then restore(), also when fn throws; when fn returns a promise, restore() runs once it
 * settles, so a mode set around an async fn (noGrad, autocast, noSync) holds across its awaits.
 */
export function runThenRestore<T>(fn: () => T, restore: () => void): T {
  let result: T;
  try {
    result = fn();
  } catch (err) {
    restore();
    throw err;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}
