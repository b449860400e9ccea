/**
 * A world of world.ts as a Pulumi YAML program using this package through its plugin, as a YAML
 * user writes it: the same pools and holders as programOf's, their renames as `aliases`, and the
 * `after` chains the plugin needs to plan new holders in one order (docs/languages.md): the
 * allocations in one chain, the blocks in another, the EgressIps in a third whose first follows the
 * last allocation (or block).
 */
import { holderArgs, poolArgs } from "./program";
import type { HolderModel, World } from "./world";

/** The project name of a YAML world's program (its URNs, and so its aliases, carry it). */
export const yamlProject = "explore";

const types = { alloc: "IpAllocation", prefix: "PrefixAllocation", egress: "EgressIp" } as const;
const outputOf = { alloc: "ips", prefix: "cidr", egress: "addresses" } as const;

/** The `after` of each holder, by holder ID: the chains described above. */
function chains(holders: HolderModel[]): Map<number, string> {
  const after = new Map<number, string>();
  const chain = (kind: HolderModel["kind"], first?: string) => {
    let before = first;
    for (const h of holders.filter((x) => x.kind === kind)) {
      if (before) after.set(h.id, before);
      before = h.name;
    }
    return before;
  };
  const lastAlloc = chain("alloc");
  const lastPrefix = chain("prefix");
  chain("egress", lastAlloc ?? lastPrefix);
  return after;
}

/** A holder's arguments, a requested ip given as a secret written `{ fn::secret: … }`. */
function secretIp(w: World, h: HolderModel): Record<string, unknown> {
  const args = holderArgs(w, h);
  return h.kind === "alloc" && h.secret ? { ...args, ip: { "fn::secret": args.ip } } : args;
}

/** The Pulumi.yaml of `w` for stack `stack`: values as JSON (YAML's flow style), references as `${name}`. */
export function yamlProgramOf(w: World, stack: string): string {
  const urn = (type: string, name: string) =>
    `urn:pulumi:${stack}::${yamlProject}::egress-ipam:index:${type}::${name}`;
  const options = (type: string, r: { aliases: string[] }) =>
    r.aliases.length > 0 ? { options: { aliases: r.aliases.map((a) => urn(type, a)) } } : {};
  const resources: Record<string, unknown> = {};
  for (const p of w.pools)
    resources[p.name] = { type: "egress-ipam:IpPool", properties: poolArgs(p), ...options("IpPool", p) };
  const after = chains(w.holders);
  const outputs: Record<string, string> = {};
  for (const h of w.holders) {
    const pool = w.pools.find((p) => p.id === h.pool)!;
    const follows = after.get(h.id);
    resources[h.name] = {
      type: `egress-ipam:${types[h.kind]}`,
      properties: {
        pool: `\${${pool.name}}`,
        ...secretIp(w, h),
        ...(follows ? { after: `\${${follows}}` } : {}),
      },
      ...options(types[h.kind], h),
    };
    outputs[`h${h.id}`] = `\${${h.name}.${outputOf[h.kind]}}`;
  }
  const lines = [`name: ${yamlProject}`, "runtime: yaml", "resources:"];
  for (const [name, r] of Object.entries(resources)) lines.push(`  ${name}: ${JSON.stringify(r)}`);
  if (Object.keys(resources).length === 0) lines[lines.length - 1] = "resources: {}";
  lines.push(Object.keys(outputs).length > 0 ? "outputs:" : "outputs: {}");
  for (const [k, v] of Object.entries(outputs)) lines.push(`  ${k}: ${JSON.stringify(v)}`);
  return lines.join("\n") + "\n";
}
