import type { ImportPlan } from "./import-plan";
import {
  addressNote,
  headerLines,
  oneLine,
  outputNames,
  poolGateway,
  provisionerSettings,
} from "./import-text";

// The Pulumi YAML program `import --language yaml` writes (a whole `Pulumi.yaml`): the same pools,
// EgressIps and CidrAssignments as the TypeScript program, as the plugin's resources. Every value
// is JSON, which YAML takes as it is; what the cluster had is a comment beside each resource.

const comment = (text: string) => `# ${oneLine(text)}`;
/** A value as YAML flow text: JSON, with `$` doubled in strings so that none reads as `${…}`. */
const value = (v: unknown) =>
  JSON.stringify(v, (_, x: unknown) => (typeof x === "string" ? x.replaceAll("$", "$$$$") : x));
/** An interpolation of resource `name`, quoted (the bracket form where a `.` would read as a property). */
const ref = (name: string, property = "") =>
  JSON.stringify(`\${${name.includes(".") ? `[${JSON.stringify(name)}]` : name}${property}}`);

/** The project's `Pulumi.yaml` for `plan`, using the egress-ipam plugin. */
export function importProgramYaml(plan: ImportPlan): string {
  const out: string[] = [
    ...headerLines(plan).map(comment),
    `# Needs the egress-ipam plugin (docs/languages.md). The EgressIps follow one another with \`after\`,`,
    `# so preview and up plan them in one order. Name the project as you like before the first up.`,
    `name: egress-ipam-imported`,
    `runtime: yaml`,
  ];
  for (const p of plan.problems) out.push(comment(`not imported: ${p}`));
  const empty = plan.pools.length + plan.egressIps.length + plan.cidrAssignments.length === 0;
  out.push(empty ? `resources: {}` : `resources:`);
  for (const p of plan.pools) {
    const ranges = [{ subnet: p.subnet, gateway: poolGateway(p) }];
    out.push(
      `  ${comment(p.from)}`,
      `  ${value(p.name)}:`,
      `    type: egress-ipam:IpPool`,
      `    properties:`,
      `      ranges: ${value(ranges)}`,
      ...(p.exclude.length > 0 ? [`      exclude: ${value(p.exclude)}`] : []),
      ...(p.cloudReserved ? [`      cloudReserved: ${value(p.cloudReserved)}`] : []),
    );
  }
  plan.egressIps.forEach((e, n) => {
    const pool = e.addresses.map((a) => `${value(a.domain)}: ${ref(a.pool)}`).join(", ");
    const before = plan.egressIps[n - 1];
    out.push(
      ...e.addresses.map((a) => `  ${comment(addressNote(a))}`),
      `  ${value(e.name)}:`,
      `    type: egress-ipam:EgressIp`,
      `    properties:`,
      `      namespace: ${value(e.namespace)}`,
      `      pool: { ${pool} }`,
      `      failureDomains: ${value(e.addresses.map((a) => a.domain))}`,
      `      provisioner: ${value(provisionerSettings(e.provisioner))}`,
      `      adopt: true`,
      ...(before ? [`      after: ${ref(before.name)}`] : []),
    );
  });
  for (const c of plan.cidrAssignments) {
    out.push(
      `  ${value(c.name)}:`,
      `    type: egress-ipam:CidrAssignment`,
      `    properties:`,
      `      pool: ${ref(c.pool)}`,
      `      provisioner: ${value(provisionerSettings(c.provisioner))}`,
      `      hosts: ${value(c.hosts)}`,
    );
  }
  const names = outputNames(plan.egressIps);
  if (plan.egressIps.length > 0) out.push(`outputs:`);
  plan.egressIps.forEach((e, n) => out.push(`  ${names[n]}: ${ref(e.name, ".ips")}`));
  return `${out.join("\n")}\n`;
}
