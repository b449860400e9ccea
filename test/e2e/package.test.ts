// The package as npm would publish it and as users install it: `npm publish --dry-run` lists only
// what users need (the build, README, LICENSE, CHANGELOG) under a stated size, every built file
// comes from a source file of this checkout, and in a clean consumer (the packed tarball installed
// by the e2e setup) `require`, `import`, TypeScript's node16 and bundler resolution, `engines` and
// the `bin` work.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/consumer.mjs";

const exec = promisify(execFile);
// Stated limits (docs/versioning.md): about 555 KB packed and 2.22 MB unpacked today.
const maxPacked = 650_000;
const maxUnpacked = 2_600_000;

interface DryRun {
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

describe("the published package", () => {
  let dryRun: DryRun;
  const files = () => dryRun.files.map((f) => f.path).sort();

  it("npm publish --dry-run lists the build, README, LICENSE and CHANGELOG only, under the size limits", async () => {
    // The e2e setup built dist/ from this checkout; scripts (prepack's build) are not run again here.
    const { stdout } = await exec("npm", ["publish", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: repoRoot,
      maxBuffer: 16 << 20,
    });
    dryRun = (JSON.parse(stdout) as Record<string, DryRun>)["pulumi-egress-ipam"]!;
    const outside = files().filter((f) => !f.startsWith("dist/"));
    expect(outside).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]);
    expect(
      files().filter((f) => /(^|\/)(test|provider|scripts|examples|\.tools|node_modules)\//.test(f)),
    ).toEqual([]);
    for (const needed of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "dist/runtime/index.js"])
      expect(files()).toContain(needed);
    for (const shim of fs.readdirSync(path.join(repoRoot, "provider", "shims")))
      expect(files()).toContain(`dist/shims/${shim.replace(/\.ts$/, ".js")}`);
    expect(dryRun.size).toBeLessThan(maxPacked);
    expect(dryRun.unpackedSize).toBeLessThan(maxUnpacked);
  });

  it("every built file comes from a source file (no output of a removed module is published)", () => {
    const stale = files()
      .filter((f) => f.startsWith("dist/"))
      .map((f) => f.slice("dist/".length).replace(/\.(js|d\.ts|js\.map)$/, ".ts"))
      .filter((f) => !fs.existsSync(path.join(repoRoot, "provider", f)));
    expect(stale, "stale build output: rm -rf dist && npm run build").toEqual([]);
  });
});

describe("the installed package in a clean consumer", () => {
  const consumer = process.env.EGRESS_IPAM_CONSUMER!;
  const scratch = fs.mkdtempSync(path.join(consumer, "module-check-"));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const manifest = JSON.parse(
    fs.readFileSync(path.join(consumer, "node_modules", "pulumi-egress-ipam", "package.json"), "utf8"),
  );
  const subpaths = Object.keys(manifest.exports).filter((k) => !k.includes("*") && k !== "./package.json");
  const specifier = (k: string) => (k === "." ? "pulumi-egress-ipam" : `pulumi-egress-ipam/${k.slice(2)}`);

  it("engines names the Node it needs, and this Node has it", () => {
    expect(manifest.engines.node).toBe(">=22");
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });

  it("every export loads with CommonJS require and with ESM import", async () => {
    const names = subpaths.map(specifier);
    const cjs = `for (const n of ${JSON.stringify(names)}) { const m = require(n); if (!m || typeof m !== "object") throw new Error(n); } console.log("ok");`;
    expect((await exec("node", ["-e", cjs], { cwd: scratch })).stdout.trim()).toBe("ok");
    const esm = `for (const n of ${JSON.stringify(names)}) { const m = await import(n); if (!m) throw new Error(n); }\nconst { IpPool } = await import("pulumi-egress-ipam"); if (typeof IpPool !== "function") throw new Error("IpPool");\nconsole.log("ok");`;
    fs.writeFileSync(path.join(scratch, "check.mjs"), esm);
    expect((await exec("node", ["check.mjs"], { cwd: scratch })).stdout.trim()).toBe("ok");
  });

  it.each([
    ["node16", "node16", "node16"],
    ["bundler", "esnext", "bundler"],
  ])("TypeScript with moduleResolution %s finds every export's types", async (_name, module, resolution) => {
    const dir = path.join(scratch, `ts-${resolution}`);
    fs.mkdirSync(dir);
    const imports = subpaths.map((k, i) => `import * as m${i} from "${specifier(k)}";`).join("\n");
    const uses = subpaths.map((_k, i) => `m${i}`).join(", ");
    fs.writeFileSync(
      path.join(dir, "check.ts"),
      `${imports}\nimport { IpPool, type IpPoolArgs } from "pulumi-egress-ipam";\n` +
        `const args: IpPoolArgs = { ranges: [{ subnet: "10.0.0.0/24" }] };\nexport const all = [${uses}, IpPool, args];\n`,
    );
    const tsc = path.join(consumer, "node_modules", "typescript", "bin", "tsc");
    const check = async (skipLibCheck: boolean) => {
      const compilerOptions = {
        module,
        moduleResolution: resolution,
        target: "es2022",
        strict: true,
        noEmit: true,
        skipLibCheck,
        types: [],
      };
      fs.writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions, files: ["check.ts"] }),
      );
      const run = await exec("node", [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch(
        (e: { stdout: string }) => e,
      );
      return run.stdout.split("\n").filter((l) => /error TS/.test(l));
    };
    // Every export and its types resolve (the setting of most projects, and of tsc --init).
    expect(await check(true)).toEqual([]);
    // Checked strictly, this package's own declarations have no error either. (Those of
    // @kubernetes/client-node need @types/ws, which that package does not bring: not ours.)
    expect((await check(false)).filter((l) => l.includes("pulumi-egress-ipam/"))).toEqual([]);
  });

  it("the bin runs and prints its help", async () => {
    const bin = path.join(consumer, "node_modules", ".bin", Object.keys(manifest.bin as object)[0]!);
    const { stdout } = await exec(bin, ["--help"]);
    expect(stdout).toMatch(/Usage: pulumi-egress-ipam/);
    expect(stdout).toMatch(/report/);
  });
});
