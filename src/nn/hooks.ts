import type { Module } from "./module.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyArgs = any[];
/** Called before forward with its arguments; returning an array (or one value) replaces them. */
export type ForwardPreHook = (module: Module, args: AnyArgs) => AnyArgs | void;
/** Called after forward; returning a value other than undefined replaces the output. */
export type ForwardHook = (module: Module, args: AnyArgs, output: unknown) => unknown;

export interface RemovableHandle {
  remove(): void;
}

let nextHookId = 0;

export function addHook<H>(hooks: Map<number, H>, hook: H): RemovableHandle {
  const id = nextHookId++;
  hooks.set(id, hook);
  return { remove: () => void hooks.delete(id) };
}

/** forward between the pre-hooks and hooks, in registration order (a hook may remove itself). */
export function runWithHooks(
  module: Module,
  args: AnyArgs,
  preHooks: Map<number, ForwardPreHook>,
  hooks: Map<number, ForwardHook>,
  forward: (args: AnyArgs) => unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): any {
  let input = args;
  for (const hook of [...preHooks.values()]) {
    const replaced = hook(module, input);
    if (replaced !== undefined) input = Array.isArray(replaced) ? replaced : [replaced];
  }
  let output = forward(input);
  for (const hook of [...hooks.values()]) {
    const replaced = hook(module, input, output);
    if (replaced !== undefined) output = replaced;
  }
  return output;
}
