import { describe, expect, it } from "vitest";
import { compensated } from "../../../provider/provisioners/kubernetes/address-lists";
import { addressesWithin } from "../../../provider/provisioners/kubernetes/egress-view";
import {
  capacityFor,
  parseEgressIpConfig,
  subnetFits,
  type KubeNode,
} from "../../../provider/provisioners/kubernetes/nodes";
import { awsInstanceId } from "../../../provider/provisioners/kubernetes/node-cloud";
import {
  provisionerConfigProblems,
  withInstanceSettings,
  withoutInstanceSettings,
} from "../../../provider/provisioners/config/provisioner-config";

describe("Kubernetes provisioner configs", () => {
  it.each([
    [{ kind: "ocp-static" }],
    [{ kind: "ocp-dynamic", context: "admin@test" }],
    [{ kind: "ovn", kubeconfig: "apiVersion: v1\nkind: Config\n", context: "admin@test" }],
    [{ kind: "ovn", nodeSelector: { "node-role.kubernetes.io/worker": "" }, zoneLabel: "example.com/rack" }],
    [{ kind: "ocp-static", cloud: { kind: "aws", region: "us-east-1" } }],
    [{ kind: "antrea", externalIPPool: "egress-pool", nodeSelector: { "egress.example.com/gateway": "" } }],
    [
      {
        kind: "cilium",
        destinations: ["0.0.0.0/0"],
        excluded: ["10.0.0.0/8"],
        cloud: { kind: "aws", region: "us-east-1" },
      },
    ],
  ])("accepts %j", (config) => {
    expect(provisionerConfigProblems(config)).toEqual([]);
  });

  it.each([
    [{ kind: "ovn", context: "" }, "context", /kubeconfig context/],
    [{ kind: "ovn", context: 7 }, "context", /got 7/],
    [{ kind: "ocp-static", nodeSelector: ["a"] }, "nodeSelector", /map Node label keys/],
    [{ kind: "ocp-static", nodeSelector: { "bad key!": "x" } }, "nodeSelector", /bad key!=/],
    [{ kind: "ocp-dynamic", zoneLabel: "no spaces allowed" }, "zoneLabel", /"no spaces allowed"/],
    [{ kind: "ovn", cloud: { kind: "aws", region: "us-east-1" } }, "cloud", /unknown setting of the ovn/],
    [{ kind: "ocp-static", cloud: { kind: "gcp" } }, "cloud", /only cloud supported/],
    [{ kind: "ocp-static", cloud: { kind: "aws", region: "nowhere" } }, "cloud.region", /"nowhere"/],
    // A Kubernetes kind takes its kubeconfig as a value (the resources keep it a secret); nothing else does.
    [
      { kind: "ocp-static", kubeconfig: "" },
      "kubeconfig",
      /must be the text of a kubeconfig .* got an empty text/,
    ],
    [
      { kind: "ovn", kubeconfig: { a: 1 } },
      "kubeconfig",
      /must be the text of a kubeconfig .* got an object/,
    ],
    [
      { kind: "aws", region: "us-east-1", kubeconfig: "apiVersion: v1" },
      "kubeconfig",
      /looks like a credential/,
    ],
    [
      { kind: "cilium", cloud: { kind: "aws", region: "us-east-1", kubeconfig: "apiVersion: v1" } },
      "cloud.kubeconfig",
      /looks like a credential/,
    ],
    [{ kind: "ovn", token: "abc" }, "token", /looks like a credential/],
    [
      { kind: "ocp-static", cloud: { kind: "aws", region: "us-east-1", secretKey: "x" } },
      "cloud.secretKey",
      /credential/,
    ],
    [{ kind: "ocp-dynamic", namespace: "team-a" }, "namespace", /unknown setting/],
    [
      { kind: "antrea", externalIPPool: "Not A Name" },
      "externalIPPool",
      /name of an Antrea ExternalIPPool.*"Not A Name"/,
    ],
    [{ kind: "ovn", externalIPPool: "egress-pool" }, "externalIPPool", /unknown setting of the ovn/],
    [{ kind: "cilium", destinations: [] }, "destinations", /list of CIDRs .* with at least one/],
    [{ kind: "cilium", excluded: ["10.0.0.1/8"] }, "excluded", /not a CIDR: "10\.0\.0\.1\/8"/],
    [{ kind: "cilium", destinations: "0.0.0.0/0" }, "destinations", /list of CIDRs/],
    [{ kind: "ovn", destinations: ["0.0.0.0/0"] }, "destinations", /unknown setting of the ovn/],
    // Elastic IPs are not supported on the cloud side of a Kubernetes kind (issue 54): refused,
    // saying what gives an egress address one.
    [
      { kind: "ocp-static", cloud: { kind: "aws", region: "us-east-1", elasticIps: "allocate" } },
      "cloud.elasticIps",
      /^Elastic IPs are not supported on the cloud side of ocp-static: .*leave elasticIps out of cloud.*kind: "aws"/,
    ],
    [
      {
        kind: "cilium",
        cloud: {
          kind: "aws",
          region: "us-east-1",
          elasticIps: { adopt: { "10.0.1.20": "eipalloc-0abc12345" } },
        },
      },
      "cloud.elasticIps",
      /^Elastic IPs are not supported on the cloud side of cilium: /,
    ],
  ])("refuses %j at %s", (config, property, reason) => {
    const problems = provisionerConfigProblems(config);
    expect(problems.map((p) => p.property)).toEqual([property]);
    expect(problems[0]!.reason).toMatch(reason);
  });

  it.each([
    [{ kind: "ocp-static" as const }, { kind: "ocp-static", namespace: "a" }],
    [{ kind: "ovn" as const }, { kind: "ovn", namespace: "a" }],
    [{ kind: "ocp-dynamic" as const }, { kind: "ocp-dynamic", namespace: "a", cidrs: ["10.0.0.0/24"] }],
    // aws and none ignore instance settings, so every namespace shares one provisioner (and its load counts).
    [
      { kind: "aws" as const, region: "us-east-1" },
      { kind: "aws", region: "us-east-1" },
    ],
    [{ kind: "none" as const }, { kind: "none" }],
  ])("scopes %j with the instance settings its kind uses", (config, scoped) => {
    const got = withInstanceSettings(config, { namespace: "a", cidrs: ["10.0.0.0/24"] });
    expect(got).toEqual(scoped);
    expect(withoutInstanceSettings(got)).toEqual(config);
  });
});

describe("cloud.network.openshift.io/egress-ipconfig", () => {
  const node = (annotation?: string): KubeNode => ({
    name: "n",
    zone: "z",
    ready: true,
    schedulable: true,
    labels: {},
    egress: parseEgressIpConfig(annotation),
  });
  const aws = '[{"interface":"eni-1","ifaddr":{"ipv4":"10.0.128.0/18"},"capacity":{"ipv4":14,"ipv6":15}}]';
  const gcp = '[{"interface":"nic0","ifaddr":{"ipv4":"10.0.32.0/19"},"capacity":{"ip":10}}]';

  it.each([
    [aws, "10.0.130.9", true, 14],
    [aws, "10.0.64.1", false, 14],
    [gcp, "10.0.33.1", true, 10],
    [undefined, "192.0.2.1", true, Infinity],
    ["not json", "192.0.2.1", true, Infinity],
  ])("%s: %s fits %s, capacity %s", (annotation, ip, fits, capacity) => {
    expect(subnetFits(node(annotation), ip)).toBe(fits);
    expect(capacityFor(node(annotation), ip)).toBe(capacity);
  });
});

describe("helpers", () => {
  it.each([
    ["aws:///us-east-1a/i-0123456789abcdef0", "i-0123456789abcdef0"],
    ["aws:///us-east-1a/not-an-instance", undefined],
    ["gce://project/zone/name", undefined],
    [undefined, undefined],
  ])("reads the instance ID of providerID %s", (providerID, id) => {
    expect(awsInstanceId(providerID)).toBe(id);
  });

  it("keeps addresses inside the CIDRs, canonical, sorted, once each", () => {
    const all = ["10.0.0.9", "10.0.1.1", "10.0.0.10", "10.0.0.9", "fd00::0001", "junk"];
    expect(addressesWithin(all, ["10.0.0.0/24", "fd00::/64"])).toEqual(["10.0.0.9", "10.0.0.10", "fd00::1"]);
  });

  it("says the undo worked when a step fails", async () => {
    const undone: string[] = [];
    const run = compensated(
      () => Promise.reject(new Error("403 Forbidden")),
      async () => undone.push("undo"),
      { step: "writing B", undone: "A was undone", leftover: "A is left" },
    );
    await expect(run).rejects.toThrow(
      "writing B failed: 403 Forbidden; A was undone, so nothing is left behind",
    );
    expect(undone).toEqual(["undo"]);
  });

  it("reports both errors and what is left when the undo fails too", async () => {
    const run = compensated(
      () => Promise.reject(new Error("403 Forbidden")),
      () => Promise.reject(new Error("throttled")),
      { step: "writing B", undone: "A was undone", leftover: "A is left on host h" },
    );
    await expect(run).rejects.toThrow(
      "writing B failed: 403 Forbidden; undoing the step before it also failed: throttled; so A is left on host h",
    );
    await run.catch((e: AggregateError) =>
      expect(e.errors.map((x: Error) => x.message)).toEqual(["403 Forbidden", "throttled"]),
    );
  });

  it("runs several undo writes in order and names what the one that failed leaves", async () => {
    const undone: string[] = [];
    const run = compensated(
      () => Promise.reject(new Error("422 Invalid")),
      [
        { run: async () => undone.push("first"), leftover: "A is on host new" },
        { run: () => Promise.reject(new Error("timeout")), leftover: "A is on no host" },
        { run: async () => undone.push("third"), leftover: "never reached" },
      ],
      { step: "moving A", undone: "A was put back" },
    );
    await expect(run).rejects.toThrow(
      "moving A failed: 422 Invalid; undoing the step before it also failed: timeout; so A is on no host",
    );
    expect(undone).toEqual(["first"]);
  });
});
