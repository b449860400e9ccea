// The layer rule and the cycle check, each fed a planted violation: they must fail on it, name it,
// and pass the real provider/.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..", "..");
const eslint = new ESLint({ cwd: root });

/** The layer rule's messages for `code` linted as if it were the file `file` of provider/. */
async function layerMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((m) => m.ruleId === "layers/downward-only").map((m) => m.message);
}

describe("the layer rule (eslint layers/downward-only)", () => {
  it.each([
    [
      "provider/kube/kube-errors.ts",
      `import { kubeLedger } from "../ledger/kubernetes/kube-ledger";`,
      "provider/ledger is a layer above provider/kube",
    ],
    [
      "provider/allocator/range.ts",
      `import { sleep } from "../core/retry"; import { shared } from "../cli/main";`,
      "provider/cli is a layer above provider/allocator",
    ],
    [
      "provider/ledger/locker.ts",
      `export { awsProvisioner } from "../provisioners/aws/aws-provisioner";`,
      "provider/provisioners is the same layer as provider/ledger",
    ],
    [
      "provider/core/retry.ts",
      `const x = require("../allocator/address");`,
      "provider/allocator is a layer above provider/core",
    ],
    [
      "provider/resources/ip-pool/ip-pool.ts",
      `const m = import("../../runtime");`,
      "provider/runtime is a layer above provider/resources",
    ],
  ])("refuses in %s: %s", async (file, code, why) => {
    const messages = await layerMessages(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(why);
  });

  it.each([
    [
      "provider/cli/main.ts",
      `import { IpamError } from "../core/ipam-error"; import { kubeClients } from "../kube/kube-config";`,
    ],
    [
      "provider/ledger/kubernetes/kube-ledger.ts",
      `import type { Ledger } from "../ledger"; import { AddressSet } from "../../allocator";`,
    ],
    [
      "provider/provisioners/aws/hosts.ts",
      `import { shared } from "../../core/process-registry"; const p = require("pulumi-egress-ipam/runtime");`,
    ],
  ])("allows in %s: %s", async (file, code) => {
    expect(await layerMessages(file, code)).toEqual([]);
  });
});

describe("the cycle check (scripts/check-import-graph.mjs)", () => {
  const run = (dir?: string) =>
    spawnSync(
      process.execPath,
      [path.join(root, "scripts", "check-import-graph.mjs"), ...(dir ? [dir] : [])],
      {
        cwd: root,
        encoding: "utf8",
      },
    );

  /** A provider/ of the given files (path → text) in a temporary folder. */
  function plant(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "import-graph-"));
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    return dir;
  }

  it("passes the real provider/", () => {
    const out = run();
    expect(out.stderr).toBe("");
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/no cycle/);
  });

  it("fails on a cycle between two files of one folder, naming both", () => {
    const dir = plant({
      "core/a.ts": `import { b } from "./b";\nexport const a = 1;`,
      "core/b.ts": `import { a } from "./a";\nexport const b = 2;`,
    });
    const out = run(dir);
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(/import cycle between files: .*core\/a\.ts ↔ .*core\/b\.ts/);
  });

  it("fails on a cycle between folders and on the import that runs up", () => {
    const dir = plant({
      "kube/client.ts": `import { retry } from "../ledger/retry";\nexport const client = 1;`,
      "ledger/retry.ts": `export const retry = 1;`,
      "ledger/user.ts": `import { client } from "../kube/client";\nexport const user = client;`,
    });
    const out = run(dir);
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(/import cycle between folders: kube ↔ ledger/);
    expect(out.stderr).toMatch(
      /kube\/client\.ts imports .*ledger\/retry\.ts: provider\/ledger is a layer above provider\/kube/,
    );
  });

  it.each([
    [
      "a folder and a file beside it",
      {
        "provisioners/config.ts": `import { k } from "./kubernetes/k";\nexport const c = k;`,
        "provisioners/kubernetes/k.ts": `export const k = 1;`,
        "provisioners/kubernetes/ovn.ts": `import { c } from "../config";\nexport const o = c;`,
      },
      /import cycle between folders: provisioners\/config\.ts ↔ provisioners\/kubernetes/,
    ],
    [
      "two sub-folders two levels down",
      {
        "resources/pool/queue.ts": `import { a } from "../ip-allocation/adopt";\nexport const q = a;`,
        "resources/ip-allocation/adopt.ts": `import { s } from "../pool/spec";\nexport const a = s;`,
        "resources/pool/spec.ts": `export const s = 1;`,
      },
      /import cycle between folders: resources\/ip-allocation ↔ resources\/pool/,
    ],
  ])("fails on a cycle between sub-folders: %s", (_, files, message) => {
    const out = run(plant(files));
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(message);
    expect(out.stderr).not.toMatch(/import cycle between files/);
  });

  it("fails on a folder's own file that imports one of its sub-folders, and lets its index.ts", () => {
    const dir = plant({
      "provisioners/factory.ts": `import { ovn } from "./kubernetes/ovn";\nexport const f = ovn;`,
      "provisioners/index.ts": `export { ovn } from "./kubernetes/ovn";`,
      "provisioners/kubernetes/ovn.ts": `export const ovn = 1;`,
    });
    const out = run(dir);
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(
      /provisioners\/factory\.ts imports .*provisioners\/kubernetes\/ovn\.ts: a folder's own files import none of its sub-folders \(kubernetes\/\)/,
    );
    expect(out.stderr).not.toMatch(/provisioners\/index\.ts imports/);
  });

  it("fails on a folder that is in no layer", () => {
    const dir = plant({
      "extras/x.ts": `import { a } from "../core/a";`,
      "core/a.ts": `export const a = 1;`,
    });
    const out = run(dir);
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(/provider\/extras is in no layer/);
  });

  it("is what npm test runs", () => {
    const script = fs.readFileSync(path.join(root, "scripts", "test.sh"), "utf8");
    expect(script).toMatch(/node scripts\/check-import-graph\.mjs/);
  });
});
