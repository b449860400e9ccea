import { describe, expect, it } from "vitest";
import type { CheckResult, ProvisionerCheck } from "../../provider/cli/check-command";
import { checkText } from "../../provider/cli/check-text";
import type { Finding } from "../../provider/cli/drift";

// The last line of `check`: "no drift" only when every provisioner was asked (issue 54: a run that
// asked nothing printed it). End to end: test/e2e/cli-check-not-checked.test.ts.
const plain = { color: false, paint: (text: string) => text };
const asked: ProvisionerCheck = {
  provisioner: { kind: "aws", region: "us-east-1" },
  subnets: ["10.0.1.0/24"],
  seen: 2,
};
const none: ProvisionerCheck = {
  provisioner: { kind: "none" },
  subnets: [],
  skipped: "the none provisioner cannot list what is on its hosts",
};
const noKubeconfig: ProvisionerCheck = {
  provisioner: { kind: "ovn", context: "prod" },
  subnets: [],
  skipped: "no kubeconfig found (looked in /root/.kube/config); set KUBECONFIG …",
  code: "INVALID_CONFIG",
};
const missing: Finding = { kind: "missing", ip: "10.0.1.4", expectedHost: "i-1", fix: ["pulumi up"] };
const result = (provisioners: ProvisionerCheck[], findings: Finding[], unchecked: string[]): CheckResult => ({
  stack: "org/p/s",
  provisioners,
  findings,
  others: [],
  publicAddresses: [],
  platform: [],
  unchecked,
});
const lastLine = (r: CheckResult) => checkText(r, plain).split("\n").at(-1);

describe("check's last line", () => {
  it.each([
    [
      "every provisioner asked, no finding",
      result([asked], [], []),
      "no drift: the hosts carry what state says",
    ],
    [
      "every provisioner asked, a finding",
      result([asked], [missing], []),
      "1 finding: run the fix commands above",
    ],
    [
      "one asked, one of a kind that cannot list its hosts",
      result([asked, none], [], ["10.9.0.2"]),
      "not checked: 1 address of provisioner none (see above); the hosts that were asked carry what state says",
    ],
    [
      "nothing asked",
      result([noKubeconfig], [], ["10.0.8.10", "10.0.8.11"]),
      "not checked: 2 addresses of provisioner ovn (context prod) (see above); nothing was compared with the hosts",
    ],
    [
      "a finding and something not asked",
      result([asked, none, noKubeconfig], [missing], ["10.0.8.10", "10.9.0.2"]),
      "1 finding: run the fix commands above; not checked: 2 addresses of provisioners none, ovn (context prod) (see above)",
    ],
  ])("%s", (_, r, line) => {
    expect(lastLine(r)).toBe(line);
    if (r.unchecked.length > 0) expect(checkText(r, plain)).not.toContain("no drift");
  });

  it("names each provisioner not asked, with the code of the error that kept it from being asked", () => {
    const text = checkText(result([asked, none, noKubeconfig], [], ["10.0.8.10", "10.9.0.2"]), plain);
    expect(text.split("\n").slice(0, 3)).toEqual([
      "provisioner aws (us-east-1): 2 addresses on hosts in 10.0.1.0/24",
      "provisioner none: not checked: the none provisioner cannot list what is on its hosts",
      "provisioner ovn (context prod): not checked: [INVALID_CONFIG] no kubeconfig found (looked in /root/.kube/config); set KUBECONFIG …",
    ]);
  });
});

describe("check's report of the platform's own status", () => {
  const unplaced: Finding = {
    kind: "unplaced",
    ip: "10.0.8.11",
    expectedHost: "node-b",
    urn: "urn:b",
    reason: "status.items: none",
    fix: [],
  };
  const r: CheckResult = {
    ...result([asked], [unplaced], []),
    platform: [
      { ip: "10.0.8.10", host: "node-a", urn: "urn:a", state: "placed", node: "node-a" },
      { ip: "10.0.8.11", host: "node-b", urn: "urn:b", state: "unplaced", why: "status.items: none" },
      { ip: "10.0.8.12", host: "node-c", urn: "urn:c", state: "unreported", why: "no status.items yet" },
    ],
  };

  it("lists each address as placed, not placed or not confirmed, and the unplaced finding without a command", () => {
    const text = checkText(r, plain);
    expect(text).toContain(
      [
        "the platform's own status of the stack's addresses: 3",
        "  10.0.8.10  on node-a: placed by the platform on node node-a",
        "  10.0.8.11  on node-b: not placed by the platform: status.items: none",
        "  10.0.8.12  on node-c: not confirmed by the platform: no status.items yet; no drift (pulumi refresh reports it once the platform says otherwise)",
      ].join("\n"),
    );
    expect(text).toContain(
      [
        "unplaced (where state says, but the platform reports it on no node): 1",
        "  10.0.8.11  on node-b: status.items: none  (urn:b)",
        "    nothing for pulumi to change: make the platform able to place it (the reason above says what it lacks); pulumi refresh then finds it placed",
      ].join("\n"),
    );
    expect(lastLine(r)).toBe("1 finding: see above");
  });

  it("leaves both sections out when there is nothing to say", () => {
    const text = checkText(result([asked], [], []), plain);
    expect(text).not.toContain("the platform's own status");
    expect(text).not.toContain("unplaced");
  });
});
