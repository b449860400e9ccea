// A Go program using this package through its plugin and the Go SDK generated from the plugin's
// schema (`npm run sdks`), run with the real engine and the Go language host: on a pool shared
// through the test cluster's ledger, the exact addresses at preview, up, a second up that changes
// nothing, a new holder that moves none, two unordered new holders refused at preview naming
// both, a claim deleted by hand found by refresh and put back by up, and a destroy that leaves
// nothing in the stack or the ledger.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, type Harness } from "../support/harness";
import { goSdk, pluginProject, writeProjectFile } from "../support/plugin-project";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";
import { repoRoot } from "../../scripts/consumer.mjs";

/** The program: a shared pool and allocations `names`, each after the one before unless `unordered`. */
function program(
  names: string[],
  pool: string,
  namespace: string,
  unordered: string[] = [],
  strategy = "lowest-free",
): string {
  const holders = names
    .map(
      (
        n,
        i,
      ) => `	${n}, err := egressipam.NewIpAllocation(ctx, "${n}", &egressipam.IpAllocationArgs{Pool: pool${
        i > 0 ? `, After: ${names[i - 1]}` : ""
      }})
	if err != nil {
		return err
	}
	ctx.Export("${n}", ${n}.Ip)`,
    )
    .join("\n");
  const loose = unordered
    .map(
      (
        n,
      ) => `	if _, err := egressipam.NewIpAllocation(ctx, "${n}", &egressipam.IpAllocationArgs{Pool: pool}); err != nil {
		return err
	}`,
    )
    .join("\n");
  return `package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"pulumi-egress-ipam/sdk/go/egressipam"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		pool, err := egressipam.NewIpPool(ctx, "pool", &egressipam.IpPoolArgs{
			Ranges: egressipam.IpPoolRangeArray{egressipam.IpPoolRangeArgs{Subnet: pulumi.String("10.61.0.0/27")}},
			Strategy: pulumi.String("${strategy}"),
			Ledger: &egressipam.LedgerArgs{
				Kind: pulumi.String("kubernetes"), Name: pulumi.String("${pool}"),
				Namespace: pulumi.String("${namespace}"), Context: pulumi.String("admin@test"),
			},
		})
		if err != nil {
			return err
		}
${holders}
${loose}
		return nil
	})
}
`;
}

describe("a Go program through the egress-ipam plugin and its Go SDK", () => {
  let h: Harness;
  let ns = "";
  const pool = uniqueName("plugin-go");
  const claims = async () =>
    (
      await kube().core.listNamespacedConfigMap({
        namespace: ns,
        labelSelector: `egress-ipam/pool=${pool},egress-ipam/role=claim`,
      })
    ).items.filter((c) => c.data?.state === "claim"); // not the holds of a preview
  const write = (names: string[], unordered: string[] = [], strategy?: string) =>
    writeProjectFile(h, "main.go", program(names, pool, ns, unordered, strategy));

  beforeAll(async () => {
    ns = await freshNamespace("plugin-go");
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    const sdk = goSdk(consumer);
    const pulumiSdk = JSON.parse(
      fs.readFileSync(path.join(repoRoot, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
    ).version;
    h = pluginProject(
      consumer,
      "plugin-go",
      {
        "Pulumi.yaml": "name: plugin-go\nruntime: go\n",
        "go.mod":
          `module plugin-go\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/pulumi/pulumi/sdk/v3 v${pulumiSdk}\n\tpulumi-egress-ipam/sdk/go v0.0.0\n)\n\n` +
          `replace pulumi-egress-ipam/sdk/go => ${sdk}\n`,
        "go.sum": fs.readFileSync(path.join(sdk, "go.sum"), "utf8"),
        "main.go": "",
      },
      { env: { KUBECONFIG: testKubeconfig() } },
    );
    write(["web", "api"]);
    execFileSync("go", ["mod", "tidy"], { cwd: h.workDir, stdio: ["ignore", "ignore", "pipe"] });
    await h.project();
  }, 600_000);
  afterAll(async () => {
    h?.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("preview shows each address, up creates exactly those, a second up changes nothing, a new holder moves none", async () => {
    const preview = await h.preview();
    const planned = [preview.planned("web")?.ip, preview.planned("api")?.ip];
    expect(planned).toEqual(["10.61.0.2", "10.61.0.3"]);
    const up = await h.up();
    expect([up.outputs.web?.value, up.outputs.api?.value]).toEqual(planned);
    expect((await claims()).map((c) => c.data?.address).sort()).toEqual(planned);
    expect(changesOf((await h.up()).summary.resourceChanges as Record<string, number>)).toEqual({});

    write(["web", "api", "db"]);
    const grown = await h.preview();
    expect([grown.op("web"), grown.op("api"), grown.op("db")]).toEqual(["same", "same", "create"]);
    expect(grown.planned("db")?.ip).toBe("10.61.0.4");
    expect((await h.up()).outputs.db?.value).toBe("10.61.0.4");
  });

  it("refuses at preview two new holders nothing orders, naming both, and a strategy the pool does not know, naming it", async () => {
    write(["web", "api", "db"], ["x", "y"]);
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(/\[INVALID_CONFIG\] (x and y|y and x) both take a new address from pool pool/);
    write(["web", "api", "db"], [], "random");
    const bad = String(await h.preview().catch((e: Error) => e));
    expect(bad).toMatch(/strategy/);
    expect(bad).toMatch(/random/);
    write(["web", "api", "db"]);
  });

  it("refresh finds a claim deleted by hand and up puts it back; destroy leaves nothing", async () => {
    const victim = (await claims()).find((c) => c.data?.address === "10.61.0.3")!;
    await kube().core.deleteNamespacedConfigMap({ name: victim.metadata!.name!, namespace: ns });
    await h.refresh();
    const lost = (await h.resources()).filter((r) => r.outputs?.claim !== undefined);
    expect(lost.map((r) => r.urn.split("::").at(-1))).toEqual(["api"]);
    await h.up();
    expect((await claims()).map((c) => c.data?.address).sort()).toEqual([
      "10.61.0.2",
      "10.61.0.3",
      "10.61.0.4",
    ]);
    await h.destroy();
    expect(await h.resources()).toEqual([]);
    expect(await claims()).toEqual([]);
  });
});
