/** ANSI styles for terminal output, or the identity when colours are off. */
export interface Style {
  /** Whether colours are on. */
  readonly color: boolean;
  /** Wraps `text` in the ANSI SGR codes (e.g. `"1;31"`), or returns it as is when colours are off. */
  paint(text: string, sgr: string): string;
}

/**
 * Colours only when the stream is a terminal and `NO_COLOR` (https://no-color.org) is unset or
 * empty; `FORCE_COLOR` (non-empty, not `0`) turns them on anyway, as most CLIs do.
 */
export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const force = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  const color = force || (Boolean(stream.isTTY) && !env.NO_COLOR);
  return {
    color,
    paint: (text, sgr) => (color ? `\u001b[${sgr}m${text}\u001b[0m` : text),
  };
}
