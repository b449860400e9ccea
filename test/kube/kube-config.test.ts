import { describe, expect, it } from "vitest";
import { kubeTargetKey, loadKubeConfig } from "../../provider/kube/kube-config";

// A kubeconfig given as a value: two clusters, a context each, bearer tokens.
const token = "s3cr3t-token-0123456789";
const kubeconfig = (current = "east") => `apiVersion: v1
kind: Config
current-context: ${current}
clusters:
  - name: east
    cluster: { server: "https://127.0.0.1:6443" }
  - name: west
    cluster: { server: "https://127.0.0.2:6443" }
contexts:
  - name: east
    context: { cluster: east, user: admin }
  - name: west
    context: { cluster: west, user: admin }
users:
  - name: admin
    user: { token: ${token} }
`;

describe("a kubeconfig given as a value", () => {
  it.each([
    ["its current context", { kubeconfig: kubeconfig() }, "east", "https://127.0.0.1:6443"],
    ["another current context", { kubeconfig: kubeconfig("west") }, "west", "https://127.0.0.2:6443"],
    ["a context named", { kubeconfig: kubeconfig(), context: "west" }, "west", "https://127.0.0.2:6443"],
  ])("with %s reaches context %s at %s, whatever KUBECONFIG names", (_case, target, context, server) => {
    const before = process.env.KUBECONFIG;
    process.env.KUBECONFIG = "/nonexistent/kubeconfig";
    try {
      const config = loadKubeConfig(target);
      expect(config.getCurrentContext()).toBe(context);
      expect(config.getCurrentCluster()?.server).toBe(server);
      expect(config.getCurrentUser()?.token).toBe(token);
    } finally {
      if (before === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = before;
    }
  });

  it.each([
    [
      "a context it does not have",
      { kubeconfig: kubeconfig(), context: "north" },
      /context "north" not found in the kubeconfig given as a value \(contexts: east, west\)/,
    ],
    [
      "a current context it does not have",
      { kubeconfig: kubeconfig("nowhere") },
      /the kubeconfig given as a value has no current context \(contexts: east, west\)/,
    ],
    [
      "text that does not parse",
      { kubeconfig: `users: [ { user: { token: ${token} } ` },
      /the kubeconfig given as a value does not parse as a kubeconfig/,
    ],
  ])("refuses %s naming the value, never quoting it", (_case, target, message) => {
    let thrown: unknown;
    try {
      loadKubeConfig(target);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ name: "IpamError", code: "INVALID_CONFIG" });
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain(token);
  });

  it("keys per-process caches by the value's digest and the context, never by the value", () => {
    const keys = [
      kubeTargetKey({ kubeconfig: kubeconfig() }),
      kubeTargetKey({ kubeconfig: kubeconfig("west") }),
      kubeTargetKey({ kubeconfig: kubeconfig(), context: "west" }),
      kubeTargetKey({ context: "west" }),
      kubeTargetKey({}),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) expect(key).not.toContain(token);
    expect(kubeTargetKey({ kubeconfig: kubeconfig() })).toBe(keys[0]);
  });
});
