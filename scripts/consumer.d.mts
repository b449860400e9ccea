/** Repository root. */
export const repoRoot: string;
/** Builds, packs and installs this package into a cached consumer project; returns its directory. */
export function prepareConsumerProject(): string;
/** An example's `index.ts` as an Automation API inline program resolving from the consumer project. */
export function exampleProgram(file: string, consumerDir: string): () => Promise<Record<string, unknown>>;
