import { describe, expect, it } from "vitest";
import {
  refuseOverlapInDeployment,
  sameSelection,
  selectionHash,
  selectionsOverlap,
  type PodSelection,
} from "../../../provider/provisioners/kubernetes/pod-selection";

const web = { app: "web" };
const api = { app: "api" };
const webFront = { app: "web", tier: "front" };
const front = { tier: "front" };

describe("selectionsOverlap and sameSelection", () => {
  it.each<[string, PodSelection, PodSelection, boolean, boolean]>([
    ["every pod and every pod", undefined, undefined, true, true],
    ["every pod and some", undefined, web, true, false],
    ["the same labels", web, { app: "web" }, true, true],
    ["one label's values differ", web, api, false, false],
    ["a superset of labels", web, webFront, true, false],
    ["labels on different keys", web, front, true, false],
    ["a differing value beside a common one", { ...webFront }, { app: "api", tier: "front" }, false, false],
  ])("%s", (_name, a, b, overlap, same) => {
    expect(selectionsOverlap(a, b)).toBe(overlap);
    expect(selectionsOverlap(b, a)).toBe(overlap);
    expect(sameSelection(a, b)).toBe(same);
  });

  it("names a selection by its labels whatever their order", () => {
    expect(selectionHash({ a: "1", b: "2" })).toBe(selectionHash({ b: "2", a: "1" }));
    expect(selectionHash(web)).toMatch(/^[0-9a-f]{10}$/);
    expect(selectionHash(web)).not.toBe(selectionHash(api));
  });
});

describe("refuseOverlapInDeployment", () => {
  let n = 0;
  /** A namespace of its own per case: claims are process-wide. */
  const fresh = () => `ns-${++n}`;
  const claim = (holder: string, podSelector: PodSelection, family: 4 | 6 = 4) => ({
    holder,
    podSelector,
    family,
  });

  it.each<[string, PodSelection, PodSelection, boolean]>([
    ["a selector after a namespace-wide EgressIp", undefined, web, true],
    ["a namespace-wide EgressIp after a selector", web, undefined, true],
    ["a superset selector", web, webFront, true],
    ["a selector differing in a value", web, api, false],
    ["two namespace-wide EgressIps (they share the namespace's objects)", undefined, undefined, false],
    ["the same selector twice (they share its objects)", web, { app: "web" }, false],
  ])("%s: refused %s", (_name, first, second, refused) => {
    const ns = fresh();
    refuseOverlapInDeployment("https://k", ns, claim("EgressIp one", first));
    const call = () => refuseOverlapInDeployment("https://k", ns, claim("EgressIp two", second));
    if (refused) {
      expect(call).toThrow(/EgressIp two: EgressIp one of this stack serves/);
      expect(call).toThrow(new RegExp(`of namespace ${ns}, and this EgressIp's`));
    } else expect(call).not.toThrow();
  });

  it("never refuses one EgressIp's own assignments (other domains, the other family), nor other namespaces or clusters", () => {
    const ns = fresh();
    refuseOverlapInDeployment("https://k", ns, claim("EgressIp one", undefined));
    expect(() =>
      refuseOverlapInDeployment("https://k", ns, claim("EgressIp one", undefined, 6)),
    ).not.toThrow();
    expect(() => refuseOverlapInDeployment("https://k", fresh(), claim("EgressIp two", web))).not.toThrow();
    expect(() => refuseOverlapInDeployment("https://other", ns, claim("EgressIp two", web))).not.toThrow();
  });

  it("with sameFamily, lets overlapping selections of different families be", () => {
    const ns = fresh();
    refuseOverlapInDeployment("https://k", ns, claim("EgressIp one", undefined, 4), true);
    expect(() =>
      refuseOverlapInDeployment("https://k", ns, claim("EgressIp two", web, 6), true),
    ).not.toThrow();
    expect(() => refuseOverlapInDeployment("https://k", ns, claim("EgressIp three", web, 4), true)).toThrow(
      /EgressIp three: EgressIp one of this stack serves every pod/,
    );
  });
});
