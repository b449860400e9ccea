// Printed commands and terminal text with hostile values from state or a cluster.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellCommand, shellWord, terminalSafe } from "../../provider/core/text";

const hostile = [
  "$(touch /tmp/pwned)",
  "`id`",
  "a'b",
  "it's; rm -rf ~",
  "line1\nline2",
  "tab\there",
  "http://h/$(cmd)",
  "--flag-looking",
  "",
  "ünïcødé and spaces",
  "\u001b[2J\u001b[31mred",
  'a\\b"c',
];

describe("shellWord / shellCommand", () => {
  it.each(hostile)("a POSIX shell reads %j back as exactly one word, expanding nothing", (value) => {
    const out = execFileSync("sh", ["-c", `printf '%s\\0' ${shellCommand("x", value, "y")}`], {
      encoding: "utf8",
    });
    expect(out.split("\0").slice(0, -1)).toEqual(["x", value, "y"]);
  });

  it.each([
    ["i-0abc123", "i-0abc123"],
    ["10.0.8.5", "10.0.8.5"],
    ["admin@test", "admin@test"],
    ["http://127.0.0.1:4566", "http://127.0.0.1:4566"],
    ["a b", "'a b'"],
    ["a'b", `'a'\\''b'`],
  ])("leaves plain words as they are and quotes the rest: %j → %s", (value, word) => {
    expect(shellWord(value)).toBe(word);
  });
});

describe("terminalSafe", () => {
  it.each([
    [
      "urn:pulumi:prod::net::egress-ipam:IpAllocation::web",
      "urn:pulumi:prod::net::egress-ipam:IpAllocation::web",
    ],
    ["tabs\tstay", "tabs\tstay"],
    ["ünïcødé", "ünïcødé"],
    ["\u001b[2Jcleared", "\\x1b[2Jcleared"],
    ["forged\nerror: line", "forged\\x0aerror: line"],
    ["carriage\roverwrite", "carriage\\x0doverwrite"],
    ["bell\u0007", "bell\\x07"],
    ["del\u007f", "del\\x7f"],
    ["c1\u009b31m", "c1\\x9b31m"],
    ["sep\u2028x", "sep\\u2028x"],
  ])("%j → %j", (text, safe) => {
    expect(terminalSafe(text)).toBe(safe);
  });

  it("leaves no control character behind, whatever the input", () => {
    const all = Array.from({ length: 0x100 }, (_, i) => String.fromCharCode(i)).join("") + "\u2028\u2029";
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(terminalSafe(all)).not.toMatch(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/);
  });
});
