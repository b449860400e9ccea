// Every failure the CLI prints carries its code in the one stable form, `error: [CODE] message`, so
// the line in front of a user can be looked up in docs/errors.md; `check --json` carries the code
// of what kept a provisioner from being asked as a field.
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkStack } from "../../provider/cli/check-command";
import { CliError, commanderLine, exitCodes, failureLine } from "../../provider/cli/cli-error";
import { main } from "../../provider/cli/main";
import { IpamError } from "../../provider/core/ipam-error";

describe("failureLine", () => {
  it.each([
    [
      "a CliError for a bad option",
      new CliError('--timeout "x": give a number of seconds'),
      'error: [INVALID_INPUT] --timeout "x": give a number of seconds',
    ],
    [
      "a CliError for an unreachable provisioner",
      new CliError("cannot ask the aws provisioner", exitCodes.unreachable),
      "error: [PROVISIONER_FAILED] cannot ask the aws provisioner",
    ],
    [
      "a CliError with its own code",
      new CliError("cannot read stack", exitCodes.usage, "LEDGER_UNAVAILABLE"),
      "error: [LEDGER_UNAVAILABLE] cannot read stack",
    ],
    [
      "an IpamError",
      new IpamError("LOCK_TIMEOUT", "pool p is locked\nby stack a"),
      "error: [LOCK_TIMEOUT] pool p is locked by stack a",
    ],
    [
      "a plain Error (a bug)",
      new Error("Cannot read properties of undefined"),
      "error: [UNEXPECTED] Cannot read properties of undefined",
    ],
    ["a thrown string", "boom", "error: [UNEXPECTED] boom"],
    [
      "a provisioner call timed out",
      new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      "error: [PROVISIONER_FAILED] The operation was aborted due to timeout",
    ],
    ["control characters", new CliError("stack \u001b[2Jx"), "error: [INVALID_INPUT] stack \\x1b[2Jx"],
  ])("%s", (_, err, line) => {
    expect(failureLine(err)).toBe(line);
  });
});

describe("commander's own lines", () => {
  it.each([
    ["error: unknown option '--colour'\n", "error: [INVALID_INPUT] unknown option '--colour'\n"],
    [
      "error: required option '-s, --stack <org/project/stack>' not specified\n",
      "error: [INVALID_INPUT] required option '-s, --stack <org/project/stack>' not specified\n",
    ],
    // Help and already coded text pass as they are.
    ["Usage: pulumi-egress-ipam [options]\n", "Usage: pulumi-egress-ipam [options]\n"],
    ["error: [INVALID_INPUT] x\n", "error: [INVALID_INPUT] x\n"],
  ])("%j", (text, line) => {
    expect(commanderLine(text)).toBe(line);
  });
});

describe("the CLI's error line, end to end", () => {
  afterEach(() => vi.restoreAllMocks());
  const run = async (args: string[]) => {
    let stderr = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    await main(["node", "pulumi-egress-ipam", ...args]);
    const code = process.exitCode;
    process.exitCode = 0;
    vi.restoreAllMocks();
    return { stderr, code };
  };

  it.each([
    [
      "an unknown option (commander's)",
      ["report", "--colour"],
      /^error: \[INVALID_INPUT\] unknown option '--colour'/,
    ],
    ["a missing mandatory option (commander's)", ["check"], /^error: \[INVALID_INPUT\] required option/],
    [
      "a bad --stack (ours)",
      ["report", "--stack", "a/b/c/d"],
      /^error: \[INVALID_INPUT\] --stack "a\/b\/c\/d": give the stack/,
    ],
    [
      "--context without --ledger",
      ["report", "--stack", "s", "--context", "c"],
      /^error: \[INVALID_INPUT\] --context goes with --ledger/,
    ],
  ])("%s", async (_, args, line) => {
    const { stderr, code } = await run(args);
    expect(stderr).toMatch(line);
    expect(code).toBe(exitCodes.usage);
  });
});

describe("check --json", () => {
  it("gives a provisioner it could not set up the code of why", async () => {
    const snapshot = {
      stack: "organization/p/s",
      pendingCreates: [],
      deployments: [],
      resources: [
        {
          urn: "urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment::a",
          type: "pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment",
          outputs: { ip: "10.0.0.5", host: "h1", provisioner: { kind: "gcp" } },
        },
      ],
    };
    const progress = { update: () => {}, stop: () => {} };
    const result = await checkStack(snapshot, progress);
    expect(result.provisioners).toEqual([
      expect.objectContaining({ skipped: expect.stringMatching(/gcp/), code: "INVALID_CONFIG" }),
    ]);
    // Its addresses were compared with nothing: check exits 3 (not checked) for them.
    expect(result.unchecked).toEqual(["10.0.0.5"]);
    // A provisioner skipped by design (it cannot list its hosts) is no error: no code.
    const none = structuredClone(snapshot);
    none.resources[0]!.outputs.provisioner = { kind: "none", hosts: { a: ["h1"] } } as never;
    const skipped = (await checkStack(none, progress)).provisioners[0]!;
    expect(skipped.skipped).toMatch(/cannot list|records no owner/);
    expect(skipped.code).toBeUndefined();
    expect((await checkStack(none, progress)).unchecked).toEqual(["10.0.0.5"]);
  });
});
