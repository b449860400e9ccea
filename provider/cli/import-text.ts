import { parsePrefix } from "../allocator/prefix";
import { formatAddress } from "../allocator/address";
import type { ImportedEgressIp, ImportedPool, ImportedProvisioner, ImportPlan } from "./import-plan";

// What the programs `import` writes say the same in every language: the header, what the cluster had
// beside each address, the pools' gateway, the provisioner's settings and the outputs' names.

/** The languages `import --language` writes programs in. */
export const programLanguages = ["typescript", "yaml", "python"] as const;
/** One of {@link programLanguages}. */
export type ProgramLanguage = (typeof programLanguages)[number];

/** Text from the cluster on one line, so that it stays inside the comment it is put in. */
export const oneLine = (text: string): string => text.replace(/[\r\n\u2028\u2029]+/g, " ");

/** The header of every imported program, as lines of text each language comments its own way. */
export function headerLines(plan: ImportPlan): string[] {
  return [
    `Written by \`pulumi-egress-ipam import\` from ${oneLine(plan.cluster.server)} (context ${oneLine(plan.cluster.context)}).`,
    `Each EgressIp has adopt: true: its first preview plans the addresses where the cluster has them`,
    `(listed beside it) and \`pulumi up\` moves none of them. Before that up, stop whatever wrote them`,
    `(the egressip-ipam-operator: scale its Deployment to 0), or it and this stack will fight over them.`,
  ];
}

/** What the cluster has of one address, for the comment beside its EgressIp. */
export const addressNote = (a: ImportedEgressIp["addresses"][number]): string =>
  oneLine(`${a.ip} in ${a.domain}${a.node ? ` on ${a.node}` : " (placed by the platform)"}: ${a.source}`);

/**
 * A pool's gateway: the network address, which is never handed out anyway. The operator and the SDN
 * hand out the subnet's first host address, which a pool's default gateway would block.
 */
export function poolGateway(p: ImportedPool): string {
  const prefix = parsePrefix(p.subnet);
  return formatAddress(prefix.family, prefix.network);
}

/** The provisioner's settings in the order the programs list them, unset ones left out. */
export function provisionerSettings(p: ImportedProvisioner): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: p.kind };
  if (p.zoneLabel) out.zoneLabel = p.zoneLabel;
  if (p.nodeSelector) out.nodeSelector = p.nodeSelector;
  if (p.cloud) out.cloud = { kind: "aws", region: p.cloud.region };
  if (p.destinations) out.destinations = p.destinations;
  if (p.excluded) out.excluded = p.excluded;
  if (p.externalIPPool !== undefined) out.externalIPPool = p.externalIPPool;
  return out;
}

/**
 * The names of the stack outputs holding each EgressIp's addresses, in order: camelCase with an
 * `Ips` suffix (never a reserved word such as `default`, the namespace), each unique.
 */
export function outputNames(egressIps: readonly ImportedEgressIp[]): string[] {
  const taken = new Set<string>();
  return egressIps.map((e) => {
    const camel = e.name.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase());
    const clean = camel.replace(/[^A-Za-z0-9]/g, "");
    const base = `${/^[0-9]/.test(clean) ? `ns${clean}` : clean}Ips`;
    let id = base;
    for (let i = 2; taken.has(id); i++) id = `${base}${i}`;
    taken.add(id);
    return id;
  });
}
