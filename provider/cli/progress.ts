/** A one-line progress indicator; see {@link progressOn}. */
export interface Progress {
  /** Replaces the text shown. */
  update(text: string): void;
  /** Clears the line and stops. */
  stop(): void;
}

const frames = ["|", "/", "-", "\\"];

/**
 * A spinner with a short text on `stream` (stderr), redrawn in place, only when the stream is a
 * terminal: piped or redirected output (CI logs, `--json` consumers) gets nothing.
 */
export function progressOn(stream: NodeJS.WriteStream, intervalMs = 100): Progress {
  if (!stream.isTTY) return { update() {}, stop() {} };
  let text = "";
  let frame = 0;
  const draw = () => {
    const width = Math.max(10, (stream.columns || 80) - 3);
    stream.write(`\r\u001b[2K${frames[frame++ % frames.length]} ${text.slice(0, width)}`);
  };
  const timer = setInterval(draw, intervalMs);
  timer.unref();
  return {
    update(t) {
      text = t;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write("\r\u001b[2K");
    },
  };
}
