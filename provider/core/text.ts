/**
 * A word as a POSIX shell reads it back unchanged: as is when it is plain (letters, digits and
 * `@%+=:,./-_`), else in single quotes with each `'` written `'\''`. Inside single quotes a shell
 * expands nothing, so `$(…)`, backquotes, `;` and newlines stay text.
 */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A command line from its words, each quoted with {@link shellWord}: the one way every command
 * this package prints (kubectl, aws, pulumi) is built, so no value from state or a cluster can
 * change what the command does.
 */
export function shellCommand(...words: string[]): string {
  return words.map(shellWord).join(" ");
}

/**
 * Text from state, a cluster or a cloud made safe for a terminal or a log: every control character
 * (C0 but tab, DEL, C1, the line and paragraph separators), escape sequences included, is written
 * as `\xNN` / `\uNNNN`, so a URN, host name or claim owner can neither recolour nor rewrite what the
 * terminal shows, nor forge a line of output.
 */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** Longest rendering of a given value in a message. */
const shownMax = 80;

/**
 * A value as a message shows it: JSON (strings quoted), every control character escaped (as
 * {@link terminalSafe}), at most 80 characters, cut with `…`. For echoing what a user gave, whatever
 * its size: a 100 KB string in a setting gets an 80-character quote, not 100 KB of error.
 */
export function shown(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? String(value);
  } catch {
    json = String(value);
  }
  json = terminalSafe(json);
  return json.length <= shownMax ? json : `${json.slice(0, shownMax - 1)}…`;
}
