import { describe, expect, it } from "vitest";
import { egressIpAssignmentProvider as provider } from "../../../provider/resources/egress-ip/egress-ip-assignment-provider";

// docs/resources/egress-ip.md: podSelector is for the kinds whose objects take one (ovn, cilium,
// antrea); the others give addresses to a whole namespace. Without a namespace, check fails before
// any call, so only the podSelector failures are looked at here.
const inputs = (kind: string, podSelector: Record<string, string>) => ({
  stack: "org/p/s",
  owner: "urn:x",
  ip: "10.0.8.10",
  failureDomain: "zone-a",
  provisioner: { kind, ...(kind === "aws" ? { region: "us-east-1" } : {}) },
  podSelector,
});
const podSelectorFailures = async (kind: string, podSelector: Record<string, string> = { app: "web" }) =>
  ((await provider.check({}, inputs(kind, podSelector))).failures ?? [])
    .filter((f) => f.property === "podSelector")
    .map((f) => f.reason);

describe("podSelector by provisioner kind", () => {
  it.each(["ovn", "cilium", "antrea"])("is taken by %s", async (kind) => {
    expect(await podSelectorFailures(kind)).toEqual([]);
  });

  it.each(["ocp-static", "ocp-dynamic", "aws", "none"])("is refused at check by %s", async (kind) => {
    expect(await podSelectorFailures(kind)).toEqual([
      `the ${kind} provisioner gives addresses to a whole namespace: podSelector is for ovn, cilium and antrea, leave it out`,
    ]);
  });

  it("refuses, for cilium, the namespace label Cilium sets itself", async () => {
    expect(await podSelectorFailures("cilium", { "io.kubernetes.pod.namespace": "other" })).toEqual([
      expect.stringContaining(
        "io.kubernetes.pod.namespace is the label Cilium gives a pod for its namespace",
      ),
    ]);
    expect(await podSelectorFailures("ovn", { "io.kubernetes.pod.namespace": "other" })).toEqual([]);
  });
});
