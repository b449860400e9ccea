/**
 * Warnings of the provider process. A dynamic provider has no engine connection to log through:
 * what it writes to stderr the engine shows with the resource's operation. Each distinct warning is
 * written once per process (a pool's claims are listed many times in one deployment).
 */
import { terminalSafe } from "./text";

const said = new Set<string>();

/** Writes `message` as a warning, once per process, its control characters escaped (it quotes cluster values). */
export function warnOnce(message: string): void {
  if (said.has(message)) return;
  said.add(message);
  process.stderr.write(`warning: ${terminalSafe(message)}\n`);
}
