import { describe, expect, it } from "vitest";
import { antreaObjectName } from "../../../../provider/provisioners/kubernetes/antrea/antrea";

describe("antreaObjectName", () => {
  it.each([
    ["team-a", "10.0.8.5", "egress-ipam-team-a-10.0.8.5"],
    ["team-a", "fd00::5", "egress-ipam-team-a-fd00.0000.0000.0000.0000.0000.0000.0005"],
    ["x", "1:2001::5", "egress-ipam-x-0001.2001.0000.0000.0000.0000.0000.0005"],
    ["x-1", "2001::5", "egress-ipam-x-1-2001.0000.0000.0000.0000.0000.0000.0005"],
  ])("%s + %s → %s", (ns, ip, name) => {
    expect(antreaObjectName(ns, ip)).toBe(name);
    // A valid object name: a DNS subdomain (no empty label, no ':').
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
  });

  it("gives two different namespace-address pairs two names", () => {
    expect(antreaObjectName("x", "1:2001::5")).not.toBe(antreaObjectName("x-1", "2001::5"));
  });
});
