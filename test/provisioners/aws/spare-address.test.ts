// The address an error about a taken address suggests instead: free in the subnet, not reserved by
// AWS, not inside a delegated prefix, the first after the taken one (wrapping around).
import { describe, expect, it } from "vitest";
import type { Eni } from "../../../provider/provisioners/aws/ec2";
import { spareAddress } from "../../../provider/provisioners/aws/spare-address";

const eni = (ips: string[], prefixes: string[] = []): Eni => ({
  id: "eni-1",
  subnetId: "subnet-1",
  addresses: ips.map((ip, i) => ({ ip, primary: i === 0 })),
  prefixes,
});

describe("spareAddress", () => {
  it.each([
    ["the next address", "10.0.1.0/24", [eni(["10.0.1.4"])], "10.0.1.4", "10.0.1.5"],
    ["past used ones", "10.0.1.0/24", [eni(["10.0.1.4", "10.0.1.5", "10.0.1.6"])], "10.0.1.4", "10.0.1.7"],
    [
      "past a delegated prefix",
      "10.0.1.0/24",
      [eni(["10.0.1.4"], ["10.0.1.16/28"])],
      "10.0.1.15",
      "10.0.1.32",
    ],
    [
      "wrapping past the broadcast and AWS's first four",
      "10.0.1.0/28",
      [eni(["10.0.1.14"])],
      "10.0.1.14",
      "10.0.1.4",
    ],
  ])("%s", (_case, cidr, enis, taken, want) => {
    expect(spareAddress(cidr, enis, taken)).toBe(want);
  });

  it("is undefined when the subnet is full", () => {
    const all = Array.from({ length: 11 }, (_, i) => `10.0.1.${4 + i}`);
    expect(spareAddress("10.0.1.0/28", [eni(all)], "10.0.1.4")).toBeUndefined();
  });
});
