import { describe, expect, it } from "vitest";
import { kubeKinds } from "../../../provider/provisioners";
import { egressIpAssignmentProvider as provider } from "../../../provider/resources/egress-ip/egress-ip-assignment-provider";

// docs/resources/egress-ip.md: `namespace` is required by the Kubernetes kinds, whose objects give
// the addresses to a namespace, and informational for `none` and `aws`.
const inputs = (provisioner: Record<string, unknown>) => ({
  stack: "org/p/s",
  owner: "urn:x",
  ip: "10.0.8.10",
  failureDomain: "zone-a",
  provisioner,
});

describe("an EgressIpAssignment without a namespace", () => {
  it("covers the five Kubernetes kinds", () => {
    expect([...kubeKinds].sort()).toEqual(["antrea", "cilium", "ocp-dynamic", "ocp-static", "ovn"]);
  });

  it.each(kubeKinds)("is refused at check by %s, naming the property", async (kind) => {
    const { failures } = await provider.check({}, inputs({ kind }));
    expect(failures?.filter((f) => f.property === "namespace")).toEqual([
      {
        property: "namespace",
        reason: `the ${kind} provisioner gives the addresses to a namespace: set the EgressIp's namespace`,
        code: "INVALID_INPUT",
      },
    ]);
  });

  it("is accepted by none", async () => {
    const { failures } = await provider.check({}, inputs({ kind: "none", hosts: { "zone-a": ["n1"] } }));
    expect(failures ?? []).toEqual([]);
  });
});
