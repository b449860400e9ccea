// One address pool shared by several stacks (here: one per team, `team-a` and `team-b`): the pool's
// ledger lives in a Kubernetes namespace every stack reaches, so two stacks never hand out the same
// address, even when they run `pulumi up` at the same time. Each stack previews exactly the
// addresses its `up` gets, unless another stack claims them in between (then `up` fails naming it).
import * as pulumi from "@pulumi/pulumi";
import { IpAllocation, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const services = config.requireObject<string[]>("services");
const context = config.get("context"); // kubeconfig context; default: the current one

// Every stack must define the pool the same way: the first one stores the definition, a stack
// with a different one is refused at preview.
const pool = new IpPool("shared", {
  ranges: [{ subnet: "10.0.16.0/27" }],
  ledger: {
    kind: "kubernetes",
    name: config.get("poolName") ?? "egress-shared",
    namespace: config.require("ledgerNamespace"),
    ...(context ? { context } : {}),
  },
});

const allocations = services.map((service) => new IpAllocation(service, { pool }));
export const addresses = Object.fromEntries(services.map((s, i) => [s, allocations[i]!.ip]));
