import { describe, expect, it } from "vitest";
import {
  ownersAnnotation,
  readOwners,
  refuseTakenOver,
  refuseUnowned,
  thereBefore,
  withOwner,
  withOwners,
  withoutAddressOwner,
  withoutOwner,
  type Owners,
} from "../../../provider/provisioners/kubernetes/owners";
import type { KubeObject } from "../../../provider/kube/object-edit";
import type { AdoptPresent } from "../../../provider/provisioners/egress-ip-provisioner";

const object = (annotation?: string): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "n",
      ...(annotation === undefined ? {} : { annotations: { [ownersAnnotation]: annotation } }),
    },
  }) as KubeObject;

describe("owner records", () => {
  it.each<[string, Owners, boolean, boolean, Owners]>([
    ["a new item: the owner only", {}, false, false, { c: ["A"] }],
    ["an item there before, with nobody recorded", {}, true, false, { c: [thereBefore, "A"] }],
    ["an item there before, adopted (an earlier version's)", {}, true, true, { c: ["A"] }],
    ["an item another owner put there", { c: ["B"] }, true, false, { c: ["B", "A"] }],
    ["an item this owner already has", { c: ["A"] }, true, false, { c: ["A"] }],
  ])("withOwner: %s", (_what, owners, present, adopt, expected) => {
    expect(withOwner(owners, "c", "A", present, adopt)).toEqual(expected);
  });

  it.each<[string, Owners, string | undefined, { owners: Owners; takeOff: boolean }]>([
    ["the last owner: taken off", { c: ["A"] }, "A", { owners: {}, takeOff: true }],
    ["another owner left: stays", { c: ["A", "B"] }, "A", { owners: { c: ["B"] }, takeOff: false }],
    ["there before: stays", { c: [thereBefore, "A"] }, "A", { owners: { c: [thereBefore] }, takeOff: false }],
    ["nobody recorded: stays", {}, "A", { owners: {}, takeOff: false }],
    ["an owner that never had it: stays", { c: ["B"] }, "A", { owners: { c: ["B"] }, takeOff: false }],
    [
      "an earlier version's assignment, nobody recorded: taken off",
      {},
      undefined,
      { owners: {}, takeOff: true },
    ],
    [
      "an earlier version's assignment, others recorded: stays",
      { c: ["B"] },
      undefined,
      { owners: { c: ["B"] }, takeOff: false },
    ],
  ])("withoutOwner: %s", (_what, owners, owner, expected) => {
    expect(withoutOwner(owners, "c", owner)).toEqual(expected);
  });

  it.each<[string, Owners, string | undefined, { owners: Owners; takeOff: boolean }]>([
    ["its owner: taken off", { c: ["A"], d: ["B"] }, "A", { owners: { d: ["B"] }, takeOff: true }],
    ["adopted by another owner since: stays", { c: ["B"] }, "A", { owners: { c: ["B"] }, takeOff: false }],
    [
      "a record that could not be read: stays",
      { c: [thereBefore] },
      "A",
      { owners: { c: [thereBefore] }, takeOff: false },
    ],
    [
      "nobody recorded (an earlier version's write): taken off",
      { d: ["B"] },
      "A",
      { owners: { d: ["B"] }, takeOff: true },
    ],
    [
      "an earlier version's assignment, nobody recorded: taken off",
      {},
      undefined,
      { owners: {}, takeOff: true },
    ],
    [
      "an earlier version's assignment, adopted since: stays",
      { c: ["B"] },
      undefined,
      { owners: { c: ["B"] }, takeOff: false },
    ],
  ])("withoutAddressOwner: %s", (_what, owners, owner, expected) => {
    expect(withoutAddressOwner(owners, "c", owner)).toEqual(expected);
  });

  it.each([
    ["no annotation", undefined, {}],
    ["the JSON this package writes", JSON.stringify({ c: ["A"] }), { c: ["A"] }],
    ["not JSON: every present item there before", "{oops", { c: [thereBefore], d: [thereBefore] }],
    ["a list instead of an object", "[1]", { c: [thereBefore], d: [thereBefore] }],
    ["an owner that is not a string", JSON.stringify({ c: [1] }), { c: [thereBefore], d: [thereBefore] }],
  ])("readOwners: %s", (_what, annotation, expected) => {
    expect(readOwners(object(annotation), ["c", "d"])).toEqual(expected);
  });

  it("writes the record with the fields, drops it when empty, and changes nothing when nothing changed", () => {
    const current = { ...object(JSON.stringify({ c: ["A"] })), egressCIDRs: ["c"] } as KubeObject;
    expect(withOwners(current, { c: ["A"] }, { egressCIDRs: ["c"] })).toBeUndefined();
    const added = withOwners(current, { c: ["A", "B"] }, { egressCIDRs: ["c"] });
    expect(added && "replace" in added && added.replace.metadata?.annotations?.[ownersAnnotation]).toBe(
      JSON.stringify({ c: ["A", "B"] }),
    );
    const gone = withOwners(current, {}, { egressCIDRs: undefined });
    expect(gone && "replace" in gone && gone.replace).toMatchObject({ metadata: { annotations: {} } });
    expect(gone && "replace" in gone && "egressCIDRs" in gone.replace).toBe(false);
  });

  // The one rule for an address already listed: `true` (create with adopt) takes anything,
  // `false` (create) only this owner's, `"unrecorded"` (update: put back, move) this owner's or
  // nobody's, never another owner's.
  const other = /recorded for B/;
  it.each<[string, Owners, AdoptPresent | undefined, RegExp | undefined]>([
    ["create: recorded for this owner (a retried create)", { ip: ["A"] }, false, undefined],
    // The way out (adopt: true, another address) is added by the assignment provider: taken-address-advice.
    [
      "create: recorded for nobody",
      {},
      false,
      /already lists ip \(not recorded as written by this package\)/,
    ],
    ["create: recorded for another owner", { ip: ["B"] }, undefined, other],
    ["create: a record that cannot be read", { ip: [thereBefore] }, false, /recorded for \(there before\)/],
    ["create with adopt: recorded for another owner", { ip: ["B"] }, true, undefined],
    ["create with adopt: recorded for nobody", {}, true, undefined],
    ["update: recorded for this owner", { ip: ["A"] }, "unrecorded", undefined],
    ["update: recorded for nobody (an earlier version)", {}, "unrecorded", undefined],
    ["update: a record that cannot be read", { ip: [thereBefore] }, "unrecorded", undefined],
    [
      "update: recorded for another owner (an adopter)",
      { ip: ["B"] },
      "unrecorded",
      /NetNamespace x lists ip recorded for B: ip was taken over by B \(adopt\), and it is not this assignment's to put back or move; remove this assignment from the program/,
    ],
  ])("refuseUnowned: %s", (_what, owners, adopt, refused) => {
    const refuse = () => refuseUnowned(owners, "ip", "A", adopt, "NetNamespace x");
    if (refused) expect(refuse).toThrow(refused);
    else expect(refuse).not.toThrow();
  });

  it.each<[string, Owners, string | undefined, RegExp | undefined]>([
    ["recorded for this owner", { ip: ["A"] }, "A", undefined],
    ["recorded for nobody (an earlier version)", {}, "A", undefined],
    ["a record that cannot be read", { ip: [thereBefore] }, "A", undefined],
    ["an assignment of an earlier version (no owner)", { ip: ["B"] }, undefined, undefined],
    [
      "recorded for another owner (an adopter): drift",
      { ip: ["B"] },
      "A",
      /^egress IP ip in Egress x was taken over by B \(adopt\): this assignment no longer holds it; remove it from the program/,
    ],
  ])("refuseTakenOver: %s", (_what, owners, owner, drift) => {
    const check = () => refuseTakenOver(owners, "ip", owner, "Egress x");
    if (drift) expect(check).toThrow(drift);
    else expect(check).not.toThrow();
  });
});
