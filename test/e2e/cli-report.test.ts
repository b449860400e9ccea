import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { Harness } from "../support/harness";
import { svgCells } from "../support/svg-cells";

type Pkg = typeof import("../../provider/index");

describe("pulumi-egress-ipam report, on a stack made by the engine", () => {
  const h = Harness.create("cli-report");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const stack = () => h.fqStackName;
  const cli = (...args: string[]) => runCli(args, h.env);

  beforeAll(async () => {
    await h.program(async () => {
      const pool = new IpPool("egress", {
        ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10" }],
        exclude: ["10.0.8.64/28"],
        reserved: ["10.0.8.50", "10.0.8.51"],
      });
      for (const name of ["web", "api", "db"]) new IpAllocation(name, { pool });
      new IpAllocation("vip", { pool, ip: "10.0.8.50" });
      // An IPv6 /64: drawn from its occupied blocks, never enumerated.
      const v6 = new IpPool("v6", { ranges: [{ subnet: "fd00:8::/64" }], strategy: "lowest-free" });
      for (const name of ["mesh-1", "mesh-2"]) new IpAllocation(name, { pool: v6 });
    });
    await h.up();
  });
  afterAll(() => h.dispose());

  it("svg helper rejects broken XML (so the SVG checks below can fail)", () => {
    const bad = path.join(h.workDir, "bad.svg");
    fs.writeFileSync(
      bad,
      '<svg xmlns="http://www.w3.org/2000/svg"><rect class="cell" data-state="held"></svg>',
    );
    expect(() => svgCells(bad)).toThrow(/mismatched tag/);
  });

  it("prints ranges, counts, the map with its legend and the holders, plain when stdout is not a terminal", async () => {
    const run = await cli("report", "--stack", stack());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).not.toContain("\u001b[");
    expect(out).toContain("range     10.0.8.10-10.0.8.254 in 10.0.8.0/24, gateway 10.0.8.1");
    // 245 addresses in the range, 16 excluded, 2 reserved: 227 handed out automatically; 3 of them held.
    expect(out).toMatch(
      /size 227 {2}held 4 {2}free 224 {2}planned-not-created 0 {2}reserved 2 {2}excluded 16/,
    );
    expect(out).toContain("10.0.8.0/24: one cell per address");
    expect(out).toContain(
      "legend: # held  + planned, not created  R reserved  G gateway  x excluded  . free  - outside the ranges",
    );
    const row = (first: string) =>
      out
        .split("\n")
        .find((l) => l.trim().startsWith(`${first} `))!
        .trim();
    // .0 outside, .1 the gateway (outside the range but drawn), .2-.9 outside, .10-.12 held; .50 held, .51 reserved.
    expect(row("10.0.8.0")).toBe(
      "10.0.8.0    -G--------###... ................ ................ ..#R............",
    );
    expect(row("10.0.8.64")).toBe(
      "10.0.8.64   xxxxxxxxxxxxxxxx ................ ................ ................",
    );
    expect(row("10.0.8.192")).toBe(
      "10.0.8.192  ................ ................ ................ ...............-",
    );
    for (const [ip, name] of [
      ["10.0.8.10", "web"],
      ["10.0.8.11", "api"],
      ["10.0.8.12", "db"],
      ["10.0.8.50", "vip"],
    ] as const) {
      expect(out).toMatch(
        new RegExp(
          `${ip.replace(/\./g, "\\.")} +held +#1 \\(update, \\d{4}-.*\\) +urn:pulumi:test::cli-report::.*::${name}\\n`,
        ),
      );
    }
  });

  it("--json prints only JSON with the same numbers and holders", async () => {
    const run = await cli("report", "--stack", stack(), "--json");
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.stack).toBe(stack());
    expect(doc.pools.map((p: { name: string }) => p.name)).toEqual(["egress", "v6"]);
    expect(doc.pools[0]).toMatchObject({
      name: "egress",
      size: "227",
      held: "4",
      free: "224",
      planned: "0",
      reserved: "2",
      excluded: "16",
    });
    expect(
      doc.pools[0].holders.map((x: { ip: string; sinceVersion: number }) => [x.ip, x.sinceVersion]),
    ).toEqual([
      ["10.0.8.10", 1],
      ["10.0.8.11", 1],
      ["10.0.8.12", 1],
      ["10.0.8.50", 1],
    ]);
    expect(doc.pools[0].maps[0].lines[0].cells).toBe(
      "-G--------###.....................................#R............",
    );
    const v6 = doc.pools[1];
    expect(v6).toMatchObject({ size: "18446744073709551614", held: "2", free: "18446744073709551612" });
    expect(v6.maps[0].blockSize).toBe("1");
    expect(v6.maps[0].lines).toEqual([
      { kind: "row", first: "fd00:8::", cells: "-G##" + ".".repeat(60) },
      {
        kind: "gap",
        first: "fd00:8::40",
        last: "fd00:8::ffff:ffff:ffff:ffff",
        free: "18446744073709551552",
        excluded: "0",
        outside: "0",
      },
    ]);
  });

  it("--svg writes a valid SVG whose held cells are as many as the holders", async () => {
    const file = path.join(h.workDir, "map.svg");
    const run = await cli("report", "--stack", stack(), "--svg", file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`map written to ${file}`);
    const cells = svgCells(file);
    // 256 cells for the /24, one row of 64 for the occupied block of the /64.
    expect(cells).toHaveLength(256 + 64);
    // 4 holders in egress, 2 in v6.
    expect(cells.filter((c) => c === "held")).toHaveLength(6);
    expect(cells.filter((c) => c === "reserved")).toHaveLength(1);
    expect(cells.filter((c) => c === "excluded")).toHaveLength(16);
    expect(cells.filter((c) => c === "gateway")).toHaveLength(2);
  });

  it("shows an interrupted create (pending_operations, as a killed `pulumi up` leaves it) as planned, not created", async () => {
    // `pulumi stack import` drops pending operations, so the file backend's checkpoint is edited
    // in place: db's create was interrupted (its checked inputs, with the plan, are all that is left).
    const file = h.checkpointFile;
    const checkpoint = JSON.parse(fs.readFileSync(file, "utf8"));
    const latest = checkpoint.checkpoint.latest;
    const db = latest.resources.find((r: { urn: string }) => r.urn.endsWith("::db"));
    latest.resources = latest.resources.filter((r: unknown) => r !== db);
    latest.pending_operations = [{ type: "creating", resource: { ...db, id: "", outputs: {} } }];
    fs.writeFileSync(file, JSON.stringify(checkpoint));

    const run = await cli("report", "--stack", stack(), "--json");
    expect(run.code).toBe(0);
    const pool = JSON.parse(run.stdout).pools.find((p: { name: string }) => p.name === "egress");
    expect(pool).toMatchObject({ held: "3", planned: "1", free: "224" });
    expect(pool.holders.find((x: { ip: string }) => x.ip === "10.0.8.12")).toMatchObject({
      state: "planned",
      owner: expect.stringMatching(/IpAllocation::db$/),
    });
    expect(pool.maps[0].lines[0].cells.slice(10, 13)).toBe("##+");
    const text = await cli("report", "--stack", stack(), "--pool", "egress");
    expect(text.stdout).toMatch(/planned-not-created 1/);
    expect(text.stdout).toMatch(/10\.0\.8\.12 +planned +.* +urn:\S+::db\n/);
  });

  it.each([
    [
      "an unknown stack",
      ["report", "--stack", "organization/no-such-project/test"],
      /cannot read stack "organization\/no-such-project\/test": .*pulumi stack ls/,
    ],
    [
      "an unknown pool",
      ["report", "--stack", "STACK", "--pool", "nope"],
      /has no pool named "nope"; its pools: egress, v6/,
    ],
    [
      "a missing --stack",
      ["report"],
      /give --stack <org\/project\/stack> \(or --ledger kubernetes:<namespace>\/<name>\)/,
    ],
    [
      "--stack with --ledger",
      ["report", "--stack", "STACK", "--ledger", "kubernetes:ipam/egress"],
      /cannot be used with/,
    ],
    [
      "a malformed --ledger",
      ["report", "--ledger", "ipam/egress"],
      /--ledger "ipam\/egress": give it as kubernetes:<namespace>\/<name>/,
    ],
    [
      "a ledger name that is no DNS label",
      ["report", "--ledger", "kubernetes:ipam/Egress_1"],
      /"Egress_1" is not a pool ledger name/,
    ],
    ["an unknown option", ["report", "--stack", "STACK", "--colour"], /unknown option '--colour'/],
  ])(
    "%s: exit 2, exactly one line on stderr naming the problem, nothing on stdout",
    async (_name, args, why) => {
      const run = await cli(...args.map((a) => (a === "STACK" ? stack() : a)));
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.endsWith("\n")).toBe(true);
      expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(/^error: \[[A-Z][A-Z_]*[A-Z]\] /);
      expect(run.stderr).toMatch(why);
    },
  );

  it("--help documents the exit codes", async () => {
    const run = await cli("report", "--help");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /Exit codes:\n\s+0 +done.*\n\s+1 +check found leaked, missing or misplaced.*\n\s+2 +usage or user error.*\n\s+3 +not checked: a provisioner or a shared pool's ledger could not be asked/,
    );
  });
});
