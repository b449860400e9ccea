import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import {
  callsSettled,
  counted,
  engineAddress,
  pluginEngineAddress,
  watchEngine,
} from "../../provider/runtime/engine-watch";
import type { ProviderImpl } from "../../provider/resources/provider-props";

// A stand-in for the engine: a TCP server in a process of its own (so it can die as the CLI does)
// that closes every connection after `idleMs`, as a gRPC server closes one that sends no preface.
function engine(idleMs: number): Promise<{ child: ChildProcess; address: string }> {
  const code = `require("net").createServer((s) => setTimeout(() => s.destroy(), ${idleMs}))
    .listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve) =>
    child.stdout!.once("data", (d) => resolve({ child, address: `127.0.0.1:${String(d).trim()}` })),
  );
}

describe("watching the engine", () => {
  const children: ChildProcess[] = [];
  afterEach(() => children.splice(0).forEach((c) => c.kill("SIGKILL")));

  it.each([
    [
      ["node", "/x/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", "127.0.0.1:4567"],
      "127.0.0.1:4567",
    ],
    [["node", "/x/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", "localhost:1"], "localhost:1"],
    [["node", "/x/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js"], undefined],
    [["node", "/x/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", "--flag"], undefined],
    [["node", "/x/program/index.js", "127.0.0.1:4567"], undefined],
    [["node"], undefined],
  ])("engineAddress(%j) is %j", (argv, expected) => {
    expect(engineAddress(argv)).toBe(expected);
  });

  // The plugin's arguments (`process.argv.slice(2)`): the engine's flags, then its address.
  it.each([
    [["127.0.0.1:4567"], "127.0.0.1:4567"],
    [["--logtostderr", "-v=9", "--tracing", "127.0.0.1:9411", "127.0.0.1:4567"], "127.0.0.1:4567"],
    [["--logtostderr"], undefined],
    [[], undefined],
    [["--unknown", "127.0.0.1:4567"], undefined],
  ])("pluginEngineAddress(%j) is %j", (args, expected) => {
    expect(pluginEngineAddress(args)).toBe(expected);
  });

  it("keeps quiet while the engine lives, even when it closes idle connections, and tells when it dies", async () => {
    const { child, address } = await engine(100);
    children.push(child);
    let goneAt = 0;
    const watch = watchEngine(address, () => (goneAt = Date.now()), 50);
    await new Promise((r) => setTimeout(r, 1500)); // about a dozen closed and renewed connections
    expect(goneAt).toBe(0);
    const killedAt = Date.now();
    child.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 1000));
    watch.stop();
    expect(goneAt).toBeGreaterThan(killedAt);
    expect(goneAt - killedAt).toBeLessThan(1000);
  });

  it("does not tell after stop", async () => {
    const { child, address } = await engine(10_000);
    children.push(child);
    let gone = false;
    watchEngine(address, () => (gone = true), 50).stop();
    child.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 300));
    expect(gone).toBe(false);
  });

  it("waits for the calls under way, but not longer than the grace", async () => {
    let finish!: () => void;
    const slow = () =>
      new Promise<{ id: string; outs: Record<string, unknown> }>(
        (r) => (finish = () => r({ id: "x", outs: {} })),
      );
    const impl = counted({ create: slow } as unknown as ProviderImpl);
    expect(await callsSettled(10)).toBe(true); // nothing under way
    const call = impl.create({});
    expect(await callsSettled(50)).toBe(false); // still running after the grace
    const settled = callsSettled(5_000);
    finish();
    await call;
    expect(await settled).toBe(true);
  });
});
