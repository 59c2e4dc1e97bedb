/**
 * Module hooks (node:module register) that make ringrun's training script an ES module whatever
 * its folder's package.json says. A script in a project created with `npm init -y` (no
 * "type": "module") would otherwise be compiled as CommonJS, where the top-level `await` of every
 * training script is a syntax error. Only the entry script is changed: the project's other files
 * keep the format their package gives them.
 */
let entry: string | null = null;

export function initialize(data: { entry?: string } | undefined): void {
  entry = data?.entry ?? null;
}

type Resolved = { url: string; format?: string | null };

export async function resolve(specifier: string, context: unknown, nextResolve: (s: string, c: unknown) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  return entry !== null && resolved.url === entry ? { ...resolved, format: "module" } : resolved;
}
