import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { configuredOrganization, rootOf, ServedStacks } from "../../provider/plugin/served-stack";
import { IpamError } from "../../provider/core/ipam-error";
import { exportStackResources, type CheckpointResource } from "../../provider/ledger/stack/stack-checkpoint";

const urn = (name: string) => `urn:pulumi:dev::net::egress-ipam:index:IpAllocation::${name}`;
const root = "urn:pulumi:dev::net::pulumi:pulumi:Stack::net-dev";
const config = (value: Record<string, unknown>) => ({ PULUMI_CONFIG: JSON.stringify(value) });
const checkpoint = (...urns: string[]): CheckpointResource[] => urns.map((u) => ({ urn: u, type: "x" }));

describe("the organization of the stack a plugin resource belongs to", () => {
  it.each([
    ["nothing set: every self-managed backend's", {}, undefined, "organization/net/dev"],
    [
      "a shell's PULUMI_ORGANIZATION is not the stack's",
      { PULUMI_ORGANIZATION: "acme" },
      undefined,
      "organization/net/dev",
    ],
    [
      "the stack's config egress-ipam:organization",
      config({ organization: "acme" }),
      undefined,
      "acme/net/dev",
    ],
    ["the engine's, once a construct gave it", {}, "acme", "acme/net/dev"],
    ["the engine's, agreeing with the config", config({ organization: "acme" }), "acme", "acme/net/dev"],
    ["an empty organization from the engine is none", config({ organization: "acme" }), "", "acme/net/dev"],
  ])("%s", (_name, env, engine, stack) => {
    const stacks = new ServedStacks({ env, load: async () => [] });
    if (engine !== undefined) stacks.learn(engine);
    expect(stacks.stackOf(urn("web"))).toBe(stack);
  });

  it("refuses a config that names another organization than the engine's, saying what to set", () => {
    const stacks = new ServedStacks({ env: config({ organization: "acme" }), load: async () => [] });
    expect(() => stacks.learn("globex")).toThrow(
      /^\[STACK_MISMATCH\] the stack config egress-ipam:organization is "acme", but the engine runs this stack in organization "globex": set it to that \(`pulumi config set egress-ipam:organization globex`\)/,
    );
  });

  it.each([
    ["no PULUMI_CONFIG", {}, undefined],
    ["not JSON", { PULUMI_CONFIG: "{" }, undefined],
    ["other keys only", config({ kubeconfig: "x" }), undefined],
    ["blank", config({ organization: "  " }), undefined],
    ["a name", config({ organization: "acme" }), "acme"],
  ])("reads egress-ipam:organization from the engine's PULUMI_CONFIG: %s", (_name, env, org) => {
    expect(configuredOrganization(env)).toBe(org);
  });

  it("names the root stack resource of a URN as every language's SDK does", () => {
    expect(rootOf(urn("web"))).toBe(root);
    expect(rootOf("urn:pulumi:prod::a-b::egress-ipam:index:EgressIp$egress-ipam:index:IpAllocation::x")).toBe(
      "urn:pulumi:prod::a-b::pulumi:pulumi:Stack::a-b-prod",
    );
  });
});

describe("a checkpoint is read as a plugin resource's stack only where it holds that resource", () => {
  const ok = async (held: CheckpointResource[], state: Record<string, unknown> | undefined) =>
    new ServedStacks({ load: async () => held }).verify(urn("web"), "organization/net/dev", state);

  it.each([
    ["an existing resource under its URN", checkpoint(root, urn("web")), { owner: urn("web") }],
    [
      "an existing resource renamed with an alias, under the URN its state names",
      checkpoint(root, urn("old")),
      { owner: urn("old") },
    ],
    ["a pool, under the URN its state names", checkpoint(urn("p")), { poolId: urn("p") }],
    [
      "an existing resource renamed with aliases twice, under the name between, which records the identity its state names",
      [...checkpoint(root), { urn: urn("between"), type: "x", outputs: { owner: urn("old") } }],
      { owner: urn("old") },
    ],
    [
      "a pool renamed with aliases twice, likewise",
      [{ urn: urn("p2"), type: "x", outputs: { poolId: urn("p") } }],
      { poolId: urn("p") },
    ],
    ["a create, where the stack's root is", checkpoint(root), undefined],
  ])("accepts %s", async (_name, held, state) => {
    await expect(ok(held, state)).resolves.toBeUndefined();
  });

  it.each([
    [
      "an existing resource another stack of the name does not hold",
      checkpoint(root, urn("other")),
      { owner: urn("web") },
      `holds no ${urn("web")}: it is another stack of the same name`,
    ],
    [
      "a holder whose state names its pool, which the other stack holds too",
      checkpoint(root, urn("pool")),
      { owner: urn("web"), poolId: urn("pool") },
      `holds no ${urn("web")}: it is another stack of the same name`,
    ],
    [
      "a create in a stack that has no root",
      checkpoint(),
      undefined,
      `holds no ${root} (the root of every deployed stack)`,
    ],
  ])("refuses %s, naming the stack read and what to set", async (_name, held, state, what) => {
    const err = await ok(held, state).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IpamError);
    expect((err as IpamError).code).toBe("STACK_MISMATCH");
    const message = (err as Error).message;
    expect(message).toMatch(/^\[STACK_MISMATCH\] the checkpoint of stack "organization\/net\/dev" /);
    expect(message).toContain(what);
    expect(message).toContain(
      "`pulumi config set egress-ipam:organization <the organization of this stack>`",
    );
  });

  it("reads the checkpoint again where the one this process keeps lacks the resource (read before it was written)", async () => {
    const reads: string[] = [];
    const stacks = new ServedStacks({
      load: async () => checkpoint(),
      reload: async (stack) => (reads.push(stack), checkpoint(root)),
    });
    await expect(stacks.verify(urn("web"), "organization/net/dev", undefined)).resolves.toBeUndefined();
    expect(reads).toEqual(["organization/net/dev"]);
  });

  it("leaves a resource with no stack in its inputs alone", async () => {
    const stacks = new ServedStacks({ load: async () => Promise.reject(new Error("not read")) });
    await expect(stacks.verify(urn("web"), undefined, {})).resolves.toBeUndefined();
  });
});

describe("a stack the backend does not have", () => {
  const missingCli = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "served-stack-"));
    const cli = path.join(dir, "pulumi");
    fs.writeFileSync(
      cli,
      "#!/bin/sh\necho \"error: no stack named 'organization/net/dev' found\" >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    return (stack: string) => exportStackResources(stack, { cli, retryDelaysMs: [] });
  };

  it("is refused as STACK_MISMATCH where the plugin chose its name, saying what to set", async () => {
    const stacks = new ServedStacks({ load: missingCli() });
    await expect(stacks.verify(urn("web"), "organization/net/dev", { owner: urn("web") })).rejects.toThrow(
      /^\[STACK_MISMATCH\] the backend has no stack "organization\/net\/dev"\. Its organization "organization" is the default: on Pulumi Cloud the stack config egress-ipam:organization names it\. Nothing was changed/,
    );
  });

  it("is left to the provider where the name is the one state recorded (a stack renamed since)", async () => {
    const stacks = new ServedStacks({ load: missingCli() });
    await expect(
      stacks.verify(urn("web"), "organization/net/old", { owner: urn("web") }),
    ).resolves.toBeUndefined();
  });

  it("passes on another failure to read it, with its code", async () => {
    const stacks = new ServedStacks({
      load: (stack) => exportStackResources(stack, { cli: "/nonexistent/pulumi", retryDelaysMs: [] }),
    });
    await expect(stacks.verify(urn("web"), "organization/net/dev", { owner: urn("web") })).rejects.toThrow(
      /^\[LEDGER_UNAVAILABLE\] cannot read the allocations of stack "organization\/net\/dev" from its checkpoint: the Pulumi CLI "\/nonexistent\/pulumi" was not found/,
    );
  });
});
