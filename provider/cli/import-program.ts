import type { ImportPlan, ImportedPool, ImportedProvisioner } from "./import-plan";
import {
  addressNote,
  headerLines,
  oneLine,
  outputNames,
  poolGateway,
  provisionerSettings,
} from "./import-text";

// The Pulumi TypeScript program `import` writes: plain declarations a user keeps and edits, every
// value a literal, what the cluster had beside each resource as a comment.

const q = (v: unknown) => JSON.stringify(v);
// Text from the cluster stays inside its `//` comment, whatever line breaks it holds.
const comment = (text: string) => `// ${oneLine(text)}`;
const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);

function provisionerLiteral(p: ImportedProvisioner): string {
  const parts = Object.entries(provisionerSettings(p)).map(
    ([key, value]) =>
      `${key}: ${key === "cloud" ? `{ kind: "aws", region: ${q(p.cloud!.region)} }` : q(value)}`,
  );
  return `{ ${parts.join(", ")} }`;
}

function poolDeclaration(p: ImportedPool): string {
  const lines = [
    comment(p.from),
    `${q(p.name)}: new ipam.IpPool(${q(p.name)}, {`,
    `  ranges: [{ subnet: ${q(p.subnet)}, gateway: ${q(poolGateway(p))} }],`,
    ...(p.exclude.length > 0 ? [`  exclude: ${q(p.exclude)},`] : []),
    ...(p.cloudReserved ? [`  cloudReserved: ${q(p.cloudReserved)},`] : []),
    `}),`,
  ];
  return lines.join("\n");
}

/** The program's `index.ts` for `plan`. */
export function importProgram(plan: ImportPlan): string {
  const out: string[] = [
    ...headerLines(plan).map(comment),
    `import * as ipam from "pulumi-egress-ipam";`,
    ``,
  ];
  for (const p of plan.problems) out.push(comment(`not imported: ${p}`));
  if (plan.problems.length > 0) out.push(``);
  out.push(`const pools = {`, `  ${indent(plan.pools.map(poolDeclaration).join("\n"), "  ")}`, `};`, ``);
  const names = outputNames(plan.egressIps);
  plan.egressIps.forEach((e, n) => {
    const domains = e.addresses.map((a) => a.domain);
    const pool = `{ ${e.addresses.map((a) => `${q(a.domain)}: pools[${q(a.pool)}]`).join(", ")} }`;
    out.push(
      ...e.addresses.map((a) => comment(addressNote(a))),
      `export const ${names[n]} = new ipam.EgressIp(${q(e.name)}, {`,
      `  namespace: ${q(e.namespace)},`,
      `  pool: ${pool},`,
      `  failureDomains: ${q(domains)},`,
      `  provisioner: ${provisionerLiteral(e.provisioner)},`,
      `  adopt: true,`,
      `}).ips;`,
      ``,
    );
  });
  for (const c of plan.cidrAssignments) {
    out.push(
      `new ipam.CidrAssignment(${q(c.name)}, {`,
      `  pool: pools[${q(c.pool)}],`,
      `  provisioner: ${provisionerLiteral(c.provisioner)},`,
      `  hosts: ${q(c.hosts)},`,
      `});`,
      ``,
    );
  }
  return out.join("\n");
}
