// Quickstart: the smallest program using pulumi-egress-ipam. Until the IpPool and IpAllocation
// resources land, it uses Echo, the package's engine smoke-test resource.
import { Echo } from "pulumi-egress-ipam/testing";

const greeting = new Echo("greeting", { value: "hello from pulumi-egress-ipam" });

export const value = greeting.value;
export const revision = greeting.revision;
