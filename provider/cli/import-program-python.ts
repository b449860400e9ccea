import type { ImportPlan } from "./import-plan";
import {
  addressNote,
  headerLines,
  oneLine,
  outputNames,
  poolGateway,
  provisionerSettings,
} from "./import-text";

// The Pulumi Python program `import --language python` writes (`__main__.py`): the same pools,
// EgressIps and CidrAssignments as the TypeScript program, through the plugin's Python SDK
// (`pulumi_egress_ipam`). Every value is a literal; what the cluster had is a comment beside it.

const comment = (text: string) => `# ${oneLine(text)}`;

/** A Python literal of a JSON-like value (strings as JSON writes them, which Python reads alike). */
function py(v: unknown): string {
  if (v === true) return "True";
  if (v === false) return "False";
  if (v === null || v === undefined) return "None";
  if (Array.isArray(v)) return `[${v.map(py).join(", ")}]`;
  if (typeof v === "object")
    return `{${Object.entries(v as object)
      .map(([k, x]) => `${JSON.stringify(k)}: ${py(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

/** The program's `__main__.py` for `plan`. */
export function importProgramPython(plan: ImportPlan): string {
  const out: string[] = [
    ...headerLines(plan).map(comment),
    `# Needs the egress-ipam plugin and its Python SDK (docs/languages.md). Each EgressIp follows the`,
    `# one before it with \`after\`, so preview and up plan them in one order.`,
    `import pulumi`,
    `import pulumi_egress_ipam as ipam`,
    ``,
  ];
  for (const p of plan.problems) out.push(comment(`not imported: ${p}`));
  if (plan.problems.length > 0) out.push(``);
  out.push(`pools = {}`);
  for (const p of plan.pools) {
    const args = [
      `ranges=${py([{ subnet: p.subnet, gateway: poolGateway(p) }])}`,
      ...(p.exclude.length > 0 ? [`exclude=${py(p.exclude)}`] : []),
      ...(p.cloudReserved ? [`cloud_reserved=${py(p.cloudReserved)}`] : []),
    ];
    out.push(comment(p.from), `pools[${py(p.name)}] = ipam.IpPool(${py(p.name)}, ${args.join(", ")})`);
  }
  out.push(``, `egress_ips = {}`);
  plan.egressIps.forEach((e, n) => {
    const pool = e.addresses.map((a) => `${py(a.domain)}: pools[${py(a.pool)}]`).join(", ");
    const before = plan.egressIps[n - 1];
    out.push(
      ...e.addresses.map((a) => comment(addressNote(a))),
      `egress_ips[${py(e.name)}] = ipam.EgressIp(`,
      `    ${py(e.name)},`,
      `    namespace=${py(e.namespace)},`,
      `    pool={${pool}},`,
      `    failure_domains=${py(e.addresses.map((a) => a.domain))},`,
      `    provisioner=${py(provisionerSettings(e.provisioner))},`,
      `    adopt=True,`,
      ...(before ? [`    after=egress_ips[${py(before.name)}],`] : []),
      `)`,
    );
  });
  if (plan.cidrAssignments.length > 0) out.push(``);
  for (const c of plan.cidrAssignments) {
    out.push(
      `ipam.CidrAssignment(${py(c.name)}, pool=pools[${py(c.pool)}], ` +
        `provisioner=${py(provisionerSettings(c.provisioner))}, hosts=${py(c.hosts)})`,
    );
  }
  const names = outputNames(plan.egressIps);
  if (plan.egressIps.length > 0) out.push(``);
  plan.egressIps.forEach((e, n) => out.push(`pulumi.export(${py(names[n])}, egress_ips[${py(e.name)}].ips)`));
  return `${out.join("\n")}\n`;
}
