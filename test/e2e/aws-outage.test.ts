// An EC2 outage during `pulumi refresh` is not drift (issue: an outage recorded as "missing" made the
// next up move every address). Real engine, moto behind the project's EC2 fault proxy, which answers
// every call with the injected error while the outage lasts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { startFaultProxy, type FaultProxy } from "../support/ec2-fault-proxy";
import { changesOf, Harness } from "../support/harness";
import { createWorld, ec2Client, motoCredentials, startMoto, type MotoServer } from "../support/moto";

type Pkg = typeof import("../../provider/index");

const region = "us-east-1";
const zone = "us-east-1a";
const egress = { role: "egress" };

describe("EgressIps on aws during an EC2 outage", () => {
  const h = Harness.create("aws-outage", { env: motoCredentials });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let moto: MotoServer;
  let proxy: FaultProxy;

  beforeAll(async () => {
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    await createWorld(ec2Client(moto.endpoint, region), {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: {
        [zone]: [
          { tags: egress, privateIp: "10.0.1.200" },
          { tags: egress, privateIp: "10.0.1.201" },
        ],
      },
    });
    await h.program(async () => {
      const provisioner = { kind: "aws" as const, region, endpoint: proxy.endpoint, hostTags: egress };
      const pool = new IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      for (const tenant of ["a", "b", "c"]) {
        new EgressIp(`team-${tenant}`, {
          pool,
          namespace: `team-${tenant}`,
          failureDomains: [zone],
          provisioner,
        });
      }
    });
    await h.up();
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });
  afterAll(async () => {
    h.dispose();
    await proxy?.stop();
    await moto?.stop();
  });

  const assignments = async () =>
    (await h.resources())
      .filter((r) => r.urn.includes("EgressIpAssignment::"))
      .map((r) => ({ host: r.outputs?.host, placement: r.outputs?.placement }));

  it.each([
    ["every call answering 503 after the retries", { code: "InternalError", status: 503 }],
    ["throttling that outlasts the retries", { code: "RequestLimitExceeded", status: 503 }],
    ["credentials EC2 refuses (AuthFailure)", { code: "AuthFailure", status: 401 }],
    [
      "an identity without permission (UnauthorizedOperation)",
      { code: "UnauthorizedOperation", status: 403 },
    ],
  ])(
    "%s: refresh fails naming the call, records nothing, and the next preview plans no change",
    async (_, fault) => {
      const before = await assignments();
      expect(before.every((a) => typeof a.host === "string" && a.host !== "")).toBe(true);
      proxy.clear();
      proxy.inject({ ...fault, times: 10_000 });
      try {
        await expect(h.refresh()).rejects.toThrow(
          /could not check egress IP 10\.0\.1\.\d+ on host i-[0-9a-f]+ \(EC2 [^)]*\).*nothing was recorded/,
        );
        // check asks the same platform: exit 3 (could not be asked), and no finding printed.
        const check = await runCli(["check", "--stack", h.fqStackName, "--json"], h.env);
        expect(check.code).toBe(3);
        expect(check.stdout).toBe("");
        expect(check.stderr).toMatch(
          /cannot ask the aws \(us-east-1[^)]*\) provisioner what is on its hosts/,
        );
      } finally {
        proxy.clear();
      }
      expect(await assignments()).toEqual(before);
      const preview = await h.preview();
      expect(Object.keys(preview.changeSummary).filter((k) => k !== "same")).toEqual([]);
    },
    300_000,
  );
});
