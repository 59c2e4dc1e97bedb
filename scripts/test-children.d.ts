// Types of scripts/test-children.js, for its test (test/util/test_children.test.ts).
export function staleDist(root: string): string | null;
export function compiledName(file: string, runId: string): string;
export function compileTestHelpers(root: string, runId: string): Promise<string[]>;
export function removeCompiled(files: readonly string[]): void;
export function newRunId(): string;
export function removeLeftovers(root: string): void;
