import { describe, expect, it } from "vitest";
import { shellWord } from "../../../provider/core/text";
import {
  listedAddresses,
  removalCommand,
  type AddressListAt,
} from "../../../provider/provisioners/kubernetes/removal-commands";

const hostSubnet = (egressIPs: unknown[]): AddressListAt => ({
  resource: "hostsubnet.network.openshift.io",
  object: {
    apiVersion: "network.openshift.io/v1",
    kind: "HostSubnet",
    metadata: { name: "node-1" },
    egressIPs,
  },
  path: "/egressIPs",
});
const egressIp = (egressIPs: string[]): AddressListAt => ({
  resource: "egressip.k8s.ovn.org",
  object: {
    apiVersion: "k8s.ovn.org/v1",
    kind: "EgressIP",
    metadata: { name: "egress-ipam-team a" },
    spec: { egressIPs },
  },
  path: "/spec/egressIPs",
});

describe("kubectl commands that take an egress address off an object", () => {
  it.each<[string, AddressListAt, string, string | undefined]>([
    [
      "tests the entry it removes, by its index",
      hostSubnet(["10.0.0.5", "10.0.0.6"]),
      "10.0.0.6",
      `kubectl --context admin@test patch hostsubnet.network.openshift.io node-1 --type=json -p '[{"op":"test","path":"/egressIPs/1","value":"10.0.0.6"},{"op":"remove","path":"/egressIPs/1"}]'`,
    ],
    [
      "matches a non-canonical spelling and tests it as written",
      hostSubnet(["FD00:0::0005"]),
      "fd00::5",
      `kubectl --context admin@test patch hostsubnet.network.openshift.io node-1 --type=json -p '[{"op":"test","path":"/egressIPs/0","value":"FD00:0::0005"},{"op":"remove","path":"/egressIPs/0"}]'`,
    ],
    [
      "quotes a name the shell would split",
      egressIp(["10.0.0.7"]),
      "10.0.0.7",
      `kubectl --context admin@test patch egressip.k8s.ovn.org 'egress-ipam-team a' --type=json -p '[{"op":"test","path":"/spec/egressIPs/0","value":"10.0.0.7"},{"op":"remove","path":"/spec/egressIPs/0"}]'`,
    ],
    ["none when the list does not have the address", hostSubnet(["10.0.0.5"]), "10.0.0.9", undefined],
  ])("%s", (_, at, ip, command) => {
    expect(removalCommand(at, ip, "admin@test")).toBe(command);
  });

  it("lists the addresses canonical and skips entries that are not addresses", () => {
    expect(listedAddresses(hostSubnet(["10.0.0.5", 7, "FD00::1", "nonsense"]))).toEqual([
      "10.0.0.5",
      "fd00::1",
    ]);
  });

  it.each([
    ["admin@test", "admin@test"],
    ["arn:aws:eks:us-east-1:1234:cluster/prod", "arn:aws:eks:us-east-1:1234:cluster/prod"],
    ["my context", "'my context'"],
    ["it's", `'it'\\''s'`],
  ])("shell word %s → %s", (text, word) => {
    expect(shellWord(text)).toBe(word);
  });
});
