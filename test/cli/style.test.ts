import { describe, expect, it } from "vitest";
import { progressOn } from "../../provider/cli/progress";
import { styleFor } from "../../provider/cli/style";

describe("styleFor", () => {
  it.each<[string, boolean | undefined, Record<string, string>, boolean]>([
    ["a terminal", true, {}, true],
    ["a pipe", false, {}, false],
    ["a terminal with NO_COLOR", true, { NO_COLOR: "1" }, false],
    ["a terminal with an empty NO_COLOR", true, { NO_COLOR: "" }, true],
    ["a pipe with FORCE_COLOR", undefined, { FORCE_COLOR: "1" }, true],
    ["a terminal with FORCE_COLOR=0", true, { FORCE_COLOR: "0" }, true],
  ])("%s", (_name, isTTY, env, color) => {
    const style = styleFor({ isTTY }, env);
    expect(style.color).toBe(color);
    expect(style.paint("x", "31")).toBe(color ? "\u001b[31mx\u001b[0m" : "x");
  });
});

describe("progressOn", () => {
  const stream = (isTTY: boolean) => {
    const writes: string[] = [];
    return {
      writes,
      s: { isTTY, columns: 0, write: (t: string) => writes.push(t) } as unknown as NodeJS.WriteStream,
    };
  };

  it("writes nothing when the stream is not a terminal", () => {
    const { writes, s } = stream(false);
    const p = progressOn(s);
    p.update("asking");
    p.stop();
    expect(writes).toEqual([]);
  });

  it("redraws one line in place on a terminal and clears it at the end", () => {
    const { writes, s } = stream(true);
    const p = progressOn(s);
    p.update("asking the aws provisioner");
    p.stop();
    expect(writes[0]).toBe("\r\u001b[2K| asking the aws provisioner");
    expect(writes.at(-1)).toBe("\r\u001b[2K");
  });
});
