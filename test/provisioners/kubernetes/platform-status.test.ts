import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../provider/kube/object-edit";
import type { PlatformStatus } from "../../../provider/provisioners/egress-ip-provisioner";
import { readOvnEgressIp } from "../../../provider/provisioners/kubernetes/egress-view";
import {
  antreaPlatformStatus,
  ovnPlatformStatus,
  type PlatformWarnings,
} from "../../../provider/provisioners/kubernetes/platform-status";

const created = "2026-01-01T10:00:00Z";
const egressIp = (status?: unknown): KubeObject =>
  ({
    metadata: { name: "egress-ipam-team", creationTimestamp: created },
    spec: { egressIPs: ["10.0.8.10"], namespaceSelector: {} },
    ...(status === undefined ? {} : { status }),
  }) as unknown as KubeObject;
const warnings = (...list: [string, string][]): PlatformWarnings => ({
  byName: new Map([["egress-ipam-team", list.map(([at, text]) => ({ at: new Date(at).getTime(), text }))]]),
});
const none = warnings();
const noMatch = "NoMatchingNodeFound: no assignable nodes";

describe("ovnPlatformStatus", () => {
  it.each<[string, KubeObject, PlatformWarnings, PlatformStatus]>([
    [
      "placed: status.items names its node",
      egressIp({ items: [{ node: "node-a", egressIP: "10.0.8.10" }] }),
      none,
      { state: "placed", node: "node-a" },
    ],
    [
      "unplaced: a status without it",
      egressIp({ items: [{ node: "node-a", egressIP: "10.0.8.11" }] }),
      none,
      { state: "unplaced", why: "status.items: 10.0.8.11 on node-a" },
    ],
    [
      "unplaced: an empty status",
      egressIp({ items: [] }),
      none,
      { state: "unplaced", why: "status.items: none" },
    ],
    [
      "unplaced: a status without items",
      egressIp({}),
      none,
      { state: "unplaced", why: "status.items: none" },
    ],
    [
      "unplaced: no status, and ovnkube's Warning event since the object was created",
      egressIp(),
      warnings(["2026-01-01T10:05:00Z", noMatch]),
      { state: "unplaced", why: `no status.items; Warning events: ${noMatch}` },
    ],
    [
      "unreported: no status, and only an event older than the object (about an earlier one of its name)",
      egressIp(),
      warnings(["2026-01-01T09:59:59Z", noMatch]),
      {
        state: "unreported",
        why: "EgressIP egress-ipam-team has no status.items: ovnkube has not reported on it yet (or is not running)",
      },
    ],
    [
      "unreported: no status, events unreadable (said, never placed)",
      egressIp(),
      { byName: new Map(), unreadable: "403 Forbidden" },
      {
        state: "unreported",
        why:
          "EgressIP egress-ipam-team has no status.items: ovnkube has not reported on it yet (or is not running); " +
          "its events could not be read (403 Forbidden)",
      },
    ],
  ])("%s", (_, object, w, expected) => {
    expect(ovnPlatformStatus(readOvnEgressIp(object), object, "10.0.8.10", w)).toEqual(expected);
  });
});

const egress = (status?: unknown): KubeObject =>
  ({
    metadata: { name: "egress-ipam-team-10-0-8-10" },
    spec: { egressIP: "10.0.8.10", appliedTo: {} },
    ...(status === undefined ? {} : { status }),
  }) as unknown as KubeObject;

describe("antreaPlatformStatus", () => {
  it.each<[string, KubeObject, PlatformStatus]>([
    ["placed: status.egressNode", egress({ egressNode: "node-a" }), { state: "placed", node: "node-a" }],
    [
      "placed: on its node, with this address in effect",
      egress({ egressNode: "node-a", egressIP: "10.0.8.10" }),
      { state: "placed", node: "node-a" },
    ],
    [
      "unplaced: another address in effect",
      egress({ egressNode: "node-a", egressIP: "10.0.8.99" }),
      { state: "unplaced", why: "status.egressIP is 10.0.8.99" },
    ],
    [
      "unplaced: no node, the conditions that are not True say why",
      egress({
        conditions: [
          { type: "IPAllocated", status: "True", reason: "Allocated" },
          { type: "IPAssigned", status: "False", reason: "AssignmentError", message: "no Node is ready" },
        ],
      }),
      {
        state: "unplaced",
        why: "status.egressNode is empty; IPAssigned False: AssignmentError (no Node is ready)",
      },
    ],
    [
      "unreported: no status",
      egress(),
      {
        state: "unreported",
        why: "Egress egress-ipam-team-10-0-8-10 has no status: Antrea has not reported on it yet (or is not running)",
      },
    ],
  ])("%s", (_, object, expected) => {
    expect(antreaPlatformStatus(object, "10.0.8.10")).toEqual(expected);
  });
});
