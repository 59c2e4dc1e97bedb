import { Tensor } from "../tensor/tensor.js";

/**
 * Installs functions of the form fn(tensor, ...args) as Tensor methods. Each ops file declares
 * its methods on the Tensor interface (declaration merging) and installs them here, so that the
 * tensor layer never imports the ops that act on it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function installMethods(methods: Record<string, (self: Tensor, ...args: any[]) => unknown>): void {
  for (const [name, fn] of Object.entries(methods)) {
    Object.defineProperty(Tensor.prototype, name, {
      value: function (this: Tensor, ...args: unknown[]) {
        return fn(this, ...args);
      },
      writable: true,
      configurable: true,
    });
  }
}
