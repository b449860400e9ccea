import { describe, expect, it } from "vitest";
import {
  ownersAnnotation,
  readOwners,
  thereBefore,
  withOwner,
  withOwners,
  withoutAddressOwner,
  withoutOwner,
  type Owners,
} from "../../../provider/provisioners/kubernetes/owners";
import type { KubeObject } from "../../../provider/kube/object-edit";

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
});
