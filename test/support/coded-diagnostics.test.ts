// The check the e2e harness runs after every engine operation: each error of this package that the
// engine prints carries its code, so every e2e refusal test enforces docs/errors.md's contract.
import type * as automation from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import { uncodedErrors } from "./coded-diagnostics";

const urn = (type: string) => `urn:pulumi:test::p::${type}::web`;
const diag = (message: string, at?: string, severity = "error"): automation.EngineEvent =>
  ({ sequence: 0, timestamp: 0, diagnosticEvent: { urn: at, message, color: "never", severity } }) as never;

describe("uncodedErrors", () => {
  it.each([
    [
      "a coded provider error",
      diag(
        "[IP_UNAVAILABLE] requested IP 10.0.8.1 is a gateway\n",
        urn("pulumi-nodejs:dynamic/egress-ipam:IpAllocation"),
      ),
      false,
    ],
    [
      "a coded check failure, after the property",
      diag(
        "pulumi-nodejs:dynamic/egress-ipam:IpAllocation resource 'web': property ip value {\"10.0.9.1\"} has a problem: [NOT_IN_RANGE] requested IP 10.0.9.1 is not in 10.0.8.0/24",
        urn("pulumi-nodejs:dynamic/egress-ipam:IpAllocation"),
      ),
      false,
    ],
    [
      "an uncoded provider error",
      diag("requested IP 10.0.8.1 is a gateway", urn("pulumi-nodejs:dynamic/egress-ipam:IpAllocation")),
      true,
    ],
    ["a code that is not one", diag("[NOT_A_CODE] x", urn("pulumi-nodejs:dynamic/egress-ipam:IpPool")), true],
    ["an error of the EgressIp component", diag("boom", urn("egress-ipam:index:EgressIp")), true],
    [
      "an uncoded IpamError of the program",
      diag(
        'Running program failed: IpamError: EgressIp "x": give failureDomains',
        urn("pulumi:pulumi:Stack"),
      ),
      true,
    ],
    [
      "a coded IpamError of the program",
      diag('Running program failed: IpamError: [INVALID_INPUT] EgressIp "x"', urn("pulumi:pulumi:Stack")),
      false,
    ],
    ["the engine's own summary", diag("update failed", urn("pulumi:pulumi:Stack")), false],
    ["another package's resource", diag("bucket exists", urn("aws:s3/bucket:Bucket")), false],
    [
      "our provider's stderr (not an error diagnostic)",
      diag("Error: x\n    at y", urn("pulumi-nodejs:dynamic/egress-ipam:IpPool"), "info#err"),
      false,
    ],
  ])("%s", (_, event, flagged) => {
    expect(uncodedErrors([event])).toHaveLength(flagged ? 1 : 0);
  });
});
