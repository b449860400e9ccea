import { describe, expect, it } from "vitest";
import { shown } from "../../../provider/core/text";
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

// Kubernetes label syntax (apimachinery's IsQualifiedName and IsValidLabelValue): what the API
// server or the platform would refuse, or store and never match, is refused at preview instead,
// naming the key or value. End to end: test/e2e/ovn-pod-selector.cluster.test.ts.
describe("podSelector label syntax", () => {
  const name63 = `a${"b".repeat(61)}c`;
  const prefix253 = Array.from({ length: 4 }, () => "d".repeat(62)).join(".") + ".e";
  it.each([
    [{ "app.kubernetes.io/name": "web" }],
    [{ app: "" }],
    [{ App_1: "A_b.c-9" }],
    [{ [name63]: name63 }],
    [{ [`${prefix253}/${name63}`]: "x" }],
  ])("takes %j", async (podSelector) => {
    expect(prefix253).toHaveLength(253);
    expect(await podSelectorFailures("ovn", podSelector)).toEqual([]);
  });

  const key = (k: string) =>
    `podSelector key ${shown(k)} is not a Kubernetes label key: give [prefix/]name, the name 1 to 63 ` +
    `letters, digits, "-", "_" or "." starting and ending with a letter or digit, the prefix a lowercase DNS ` +
    `subdomain of at most 253 characters (e.g. "app" or "example.com/tier")`;
  const value = (k: string, v: string) =>
    `podSelector value ${shown(v)} of key ${shown(k)} is not a Kubernetes label value: give ` +
    `at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit, or ""`;
  it.each([
    ["a space", { "app web": "x" }, [key("app web")]],
    ["a leading dash", { "-app": "x" }, [key("-app")]],
    ["an empty name after the prefix", { "example.com/": "x" }, [key("example.com/")]],
    ["a name of 64 characters", { [`${name63}d`]: "x" }, [key(`${name63}d`)]],
    ["an uppercase prefix", { "Example.com/app": "x" }, [key("Example.com/app")]],
    ["a prefix of 254 characters", { [`${prefix253}e/app`]: "x" }, [key(`${prefix253}e/app`)]],
    ["two slashes", { "a/b/c": "x" }, [key("a/b/c")]],
    ["a value ending in a dash", { app: "web-" }, [value("app", "web-")]],
    ["a value with a slash", { app: "web/front" }, [value("app", "web/front")]],
    [
      "a bad key and a bad value at once",
      { "app web": "x", tier: ".front" },
      [key("app web"), value("tier", ".front")],
    ],
  ])("refuses %s, naming it", async (_, podSelector, reasons) => {
    const { failures } = await provider.check({}, inputs("ovn", podSelector));
    expect(failures?.filter((f) => f.property === "podSelector")).toEqual(
      reasons.map((reason) => ({ property: "podSelector", reason, code: "INVALID_INPUT" })),
    );
  });
});
