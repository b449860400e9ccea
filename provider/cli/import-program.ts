import { parsePrefix } from "../allocator/prefix";
import { formatAddress } from "../allocator/address";
import type { ImportPlan, ImportedPool, ImportedProvisioner } from "./import-plan";

// The Pulumi TypeScript program `import` writes: plain declarations a user keeps and edits, every
// value a literal, what the cluster had beside each resource as a comment.

const q = (v: unknown) => JSON.stringify(v);
// Text from the cluster stays inside its `//` comment, whatever line breaks it holds.
const comment = (text: string) => `// ${text.replace(/[\r\n\u2028\u2029]+/g, " ")}`;
const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);

function provisionerLiteral(p: ImportedProvisioner): string {
  const parts = [`kind: ${q(p.kind)}`];
  if (p.zoneLabel) parts.push(`zoneLabel: ${q(p.zoneLabel)}`);
  if (p.nodeSelector) parts.push(`nodeSelector: ${q(p.nodeSelector)}`);
  if (p.cloud) parts.push(`cloud: { kind: "aws", region: ${q(p.cloud.region)} }`);
  if (p.destinations) parts.push(`destinations: ${q(p.destinations)}`);
  if (p.excluded) parts.push(`excluded: ${q(p.excluded)}`);
  if (p.externalIPPool !== undefined) parts.push(`externalIPPool: ${q(p.externalIPPool)}`);
  return `{ ${parts.join(", ")} }`;
}

function poolDeclaration(p: ImportedPool): string {
  const prefix = parsePrefix(p.subnet);
  // The gateway is put on the network address, which is never handed out anyway: the operator and
  // the SDN hand out the subnet's first host address, which a pool's default gateway would block.
  const gateway = formatAddress(prefix.family, prefix.network);
  const lines = [
    comment(p.from),
    `${q(p.name)}: new ipam.IpPool(${q(p.name)}, {`,
    `  ranges: [{ subnet: ${q(p.subnet)}, gateway: ${q(gateway)} }],`,
    ...(p.exclude.length > 0 ? [`  exclude: ${q(p.exclude)},`] : []),
    ...(p.cloudReserved ? [`  cloudReserved: ${q(p.cloudReserved)},`] : []),
    `}),`,
  ];
  return lines.join("\n");
}

/** The program's `index.ts` for `plan`. */
export function importProgram(plan: ImportPlan): string {
  const out: string[] = [
    comment(
      `Written by \`pulumi-egress-ipam import\` from ${plan.cluster.server} (context ${plan.cluster.context}).`,
    ),
    `// Each EgressIp has adopt: true: its first preview plans the addresses where the cluster has them`,
    `// (listed beside it) and \`pulumi up\` moves none of them. Before that up, stop whatever wrote them`,
    `// (the egressip-ipam-operator: scale its Deployment to 0), or it and this stack will fight over them.`,
    `import * as ipam from "pulumi-egress-ipam";`,
    ``,
  ];
  for (const p of plan.problems) out.push(comment(`not imported: ${p}`));
  if (plan.problems.length > 0) out.push(``);
  out.push(`const pools = {`, `  ${indent(plan.pools.map(poolDeclaration).join("\n"), "  ")}`, `};`, ``);
  const names = new Set<string>();
  for (const e of plan.egressIps) {
    const name = identifier(e.name, names);
    const domains = e.addresses.map((a) => a.domain);
    const pool = `{ ${e.addresses.map((a) => `${q(a.domain)}: pools[${q(a.pool)}]`).join(", ")} }`;
    out.push(
      ...e.addresses.map((a) =>
        comment(
          `${a.ip} in ${a.domain}${a.node ? ` on ${a.node}` : " (placed by the platform)"}: ${a.source}`,
        ),
      ),
      `export const ${name} = new ipam.EgressIp(${q(e.name)}, {`,
      `  namespace: ${q(e.namespace)},`,
      `  pool: ${pool},`,
      `  failureDomains: ${q(domains)},`,
      `  provisioner: ${provisionerLiteral(e.provisioner)},`,
      `  adopt: true,`,
      `}).ips;`,
      ``,
    );
  }
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

/**
 * The name of the stack output holding a namespace's addresses: camelCase with an `Ips` suffix
 * (never a reserved word such as `default`, the namespace), unique in `taken` (which it joins).
 */
function identifier(name: string, taken: Set<string>): string {
  const camel = name.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
  const clean = camel.replace(/[^A-Za-z0-9]/g, "");
  const base = `${/^[0-9]/.test(clean) ? `ns${clean}` : clean}Ips`;
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}${i}`;
  taken.add(id);
  return id;
}
