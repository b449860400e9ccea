import { errorMessage } from "../core/failure";
import { ownKind } from "../core/resource-types";
import { codeOf, type IpamErrorCode } from "../core/ipam-error";
import { checkRequestable, poolSubnets } from "../resources/pool/pool-spec";
import { createProvisioner } from "../provisioners/factory/create-provisioner";
import type { EgressIPProvisioner, Placement } from "../provisioners/egress-ip-provisioner";
import type { ProvisionerConfig } from "../provisioners/config/provisioner-config";
import type { Props } from "../resources/provider-props";
import { readRecord } from "../ledger/stack/allocation-record";
import { CliError, exitCodes } from "./cli-error";
import {
  findDrift,
  inUseByOthers,
  platformReports,
  publicAddresses,
  type Finding,
  type OtherUse,
  type PlatformReport,
  type PublicAddress,
  type StatePlacement,
} from "./drift";
import { stackOwnership } from "./stack-ownership";
import { compareEntries } from "./holder";
import { stackPools, type StackPool } from "./stack-pools";
import { poolScope, type PoolEntry, type PoolScope } from "./pool-scope";
import { sharedHolders, stackRefOf } from "./ledger-usage";
import type { Progress } from "./progress";
import type { StackSnapshot } from "./stack-snapshot";

/** One provisioner config of the stack and what became of asking it. */
export interface ProvisionerCheck {
  /**
   * The config as stored in state (names and endpoints; a kubeconfig given as a value shows as
   * `[secret]`, as Pulumi shows it).
   */
  provisioner: ProvisionerConfig;
  /** The subnets asked about: those of the pools its addresses come from. */
  subnets: string[];
  /** Addresses it saw on hosts there; undefined when it was not asked. */
  seen?: number;
  /** Why it was not asked (a kind that cannot list what is on its hosts). */
  skipped?: string;
  /** The code of the error that kept it from being asked (see docs/errors.md), when one did. */
  code?: IpamErrorCode;
  /**
   * `cloud`: this entry is the cloud side of the config (`cloud: { kind: "aws" }` of ocp-static and
   * cilium: the secondary IPs of the Nodes' EC2 instances), asked besides the kind's own objects.
   */
  side?: "cloud";
}

/** The result of `check`: every finding, what is in use by others, and which provisioners were asked. */
export interface CheckResult {
  stack: string;
  provisioners: ProvisionerCheck[];
  findings: Finding[];
  /** Addresses inside the pools that are on hosts but not this stack's: no finding, no fix. */
  others: OtherUse[];
  /** The public address each of the stack's addresses leaves from, where it has one (aws: its Elastic IP). */
  publicAddresses: PublicAddress[];
  /**
   * What the platform itself reports about each of the stack's addresses, for kinds whose platform
   * writes a status (ovn, antrea, ocp-dynamic): placed on a node, not placed (a finding `unplaced`),
   * or not confirmed (nothing reported yet: no finding).
   */
  platform: PlatformReport[];
  /**
   * The stack's addresses whose provisioner was not asked (skipped: its kind cannot list its hosts,
   * or it could not be set up), in address order: nothing was compared for them, so no finding
   * about them means nothing, and `check` exits 3.
   */
  unchecked: string[];
}

const isAssignment = (type: string) => ownKind(type) === "EgressIpAssignment";

/**
 * Which of the stack's pools a provisioner's addresses come from (by range, a pool's blocks taken
 * out: a child pool's address is not its parent's, or by `observeWith`).
 */
function poolsOf(
  config: string,
  placed: StatePlacement[],
  pools: StackPool[],
  snapshot: StackSnapshot,
  scope: PoolScope,
) {
  const observed = new Set(
    snapshot.resources
      .filter((r) => JSON.stringify(r.inputs?.observeWith) === config)
      .map((r) => readRecord(r.outputs)?.pool),
  );
  return pools.filter((p) => observed.has(p.id) || placed.some(({ ip }) => scope.answersFor(p, ip)));
}

/**
 * Asks every provisioner the stack's EgressIpAssignments use what is really on its hosts, in the
 * subnets of their pools, and compares it with state. Read only. A provisioner kind without
 * `placements`, one not available in this version and one that cannot be set up (no kubeconfig,
 * an unknown context) is listed as skipped, and its addresses as {@link CheckResult.unchecked}.
 * @throws CliError (exit 3) naming the provisioner when it cannot be asked.
 */
export async function checkStack(
  snapshot: StackSnapshot,
  progress: Progress,
  signal?: AbortSignal,
): Promise<CheckResult> {
  const pools = stackPools(snapshot);
  const byConfig = new Map<string, StatePlacement[]>();
  for (const r of snapshot.resources) {
    const props = (r.outputs ?? {}) as Props;
    if (!isAssignment(r.type) || r.delete || typeof props.ip !== "string") continue;
    const host = String(props.host || props.placement?.from || "");
    if (!host) continue;
    const key = JSON.stringify(props.provisioner ?? r.inputs?.provisioner);
    byConfig.set(key, [...(byConfig.get(key) ?? []), { ip: props.ip, host, urn: r.urn }]);
  }
  const held = new Set<string>();
  const entries: PoolEntry[] = [];
  for (const r of [...snapshot.resources, ...snapshot.pendingCreates]) {
    for (const record of [readRecord(r.outputs), readRecord(r.inputs)]) {
      for (const ip of record?.ips ?? []) {
        held.add(ip);
        entries.push({ pool: record!.pool, ip });
      }
    }
  }
  for (const list of byConfig.values()) list.forEach((p) => held.add(p.ip));
  // A shared pool's addresses are held by every stack that claimed them, not by this one alone.
  if (pools.some((p) => p.ledger)) progress.update("reading the claims of the stack's shared pools");
  for (const [pool, view] of await sharedHolders(pools, stackRefOf(snapshot))) {
    for (const { ip } of view.holders) {
      held.add(ip);
      entries.push({ pool, ip });
    }
  }
  // Addresses inside a held block are the block's: only a pool made of it answers for them.
  const scope = poolScope(entries);

  const ownership = stackOwnership(snapshot);
  const result: CheckResult = {
    stack: snapshot.stack,
    provisioners: [],
    findings: [],
    others: [],
    publicAddresses: [],
    platform: [],
    unchecked: [],
  };
  for (const [key, placed] of byConfig) {
    const config = JSON.parse(key) as ProvisionerConfig;
    const mine = poolsOf(key, placed, pools, snapshot, scope);
    const subnets = [...new Set(mine.flatMap(({ pool }) => poolSubnets(pool.rangeSets)))];
    const entry: ProvisionerCheck = { provisioner: printable(config), subnets };
    result.provisioners.push(entry);
    let provisioner: EgressIPProvisioner;
    try {
      provisioner = createProvisioner(config);
    } catch (e) {
      entry.skipped = errorMessage(e);
      entry.code = codeOf(e);
      result.unchecked.push(...placed.map((p) => p.ip));
      continue;
    }
    const style = provisioner.placementOwners;
    if (!provisioner.placements || !style) {
      entry.skipped = provisioner.placements
        ? `the ${config.kind} provisioner records no owner next to its addresses`
        : `the ${config.kind} provisioner cannot list what is on its hosts`;
      result.unchecked.push(...placed.map((p) => p.ip));
      continue;
    }
    const compare = async (seen: Placement[], owners: "named" | "hashed", side?: "cloud") => {
      const allocatable = new Set<string>();
      for (const p of seen) {
        for (const one of mine) {
          if (
            scope.answersFor(one, p.ip) &&
            (await checkRequestable(one.pool, p.ip).then(
              () => true,
              () => false,
            ))
          )
            allocatable.add(p.ip);
        }
      }
      const input = {
        stack: snapshot.stack,
        placed,
        seen,
        inPool: (ip: string) => allocatable.has(ip),
        heldInState: (ip: string) => held.has(ip),
        // Only what the owner records say is this stack's is ever leaked: the one place that decides.
        isOurs: (p: Placement) => ownership.isOurs(p, owners),
        namesAssignment: (p: Placement, urn: string) => ownership.namesAssignment(p, owners, urn),
      };
      result.findings.push(...findDrift(input).map((f) => (side ? { ...f, side } : f)));
      result.others.push(...inUseByOthers(input));
      result.publicAddresses.push(...publicAddresses(input));
      result.platform.push(...platformReports(input));
    };
    const seen = await ask(`the ${describe(config)} provisioner`, subnets, progress, (s) =>
      provisioner.placements!(s, signal),
    );
    entry.seen = seen.length;
    await compare(seen, style);
    if (provisioner.cloudPlacements) {
      // Each address is also a secondary IP of its Node's EC2 instance, recorded in the interface's tag.
      const cloudEntry: ProvisionerCheck = { provisioner: printable(config), subnets, side: "cloud" };
      result.provisioners.push(cloudEntry);
      const what = `the cloud side ${describe(cloudOf(config)!)} of the ${describe(config)} provisioner`;
      const onCloud = await ask(what, subnets, progress, (s) => provisioner.cloudPlacements!(s, signal));
      cloudEntry.seen = onCloud.length;
      await compare(onCloud, "hashed", "cloud");
    }
  }
  // Configs that differ in a setting of some addresses only (aws's elasticIps: state keeps each
  // assignment's own copy) ask about the same subnets: what is nobody's is found once per config.
  result.findings = unique(result.findings, (f) => JSON.stringify(f)).sort(
    (a, b) => compareEntries(a.ip, b.ip) || a.kind.localeCompare(b.kind),
  );
  result.others = unique(result.others, (o) => `${o.ip} ${o.host}`).sort(
    (a, b) => compareEntries(a.ip, b.ip) || a.host.localeCompare(b.host),
  );
  result.publicAddresses.sort((a, b) => compareEntries(a.ip, b.ip));
  result.platform = unique(result.platform, (r) => `${r.ip} ${r.urn}`).sort((a, b) =>
    compareEntries(a.ip, b.ip),
  );
  result.unchecked = [...new Set(result.unchecked)].sort(compareEntries);
  return result;
}

/**
 * What `read` sees on the hosts in `subnets`, asked of `what` (`the aws (…) provisioner`).
 * @throws CliError (exit 3) naming `what` when it cannot be asked.
 */
async function ask(
  what: string,
  subnets: string[],
  progress: Progress,
  read: (subnets: string[]) => Promise<Placement[]>,
): Promise<Placement[]> {
  progress.update(`asking ${what} about ${subnets.join(", ")}`);
  return read(subnets).catch((e: unknown) => {
    const why = errorMessage(e);
    throw new CliError(
      `cannot ask ${what} what is on its hosts: ${why.replace(/\s*\n\s*/g, " ")}; ` +
        `check that its endpoint is reachable and that credentials are available (AWS: the default credential chain; ` +
        `Kubernetes: the kubeconfig of KUBECONFIG or ~/.kube/config and the provisioner's context), then run check again`,
      exitCodes.unreachable,
      codeOf(e, "PROVISIONER_FAILED"),
    );
  });
}

/** The cloud side of a config (`cloud` of ocp-static and cilium), when it has one. */
export function cloudOf(config: ProvisionerConfig): ProvisionerConfig | undefined {
  return (config as { cloud?: ProvisionerConfig }).cloud;
}

/** The items with distinct keys, the first of each kept, in order. */
function unique<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && Boolean(seen.add(key(item))));
}

/** A config as the CLI prints it: a kubeconfig given as a value is `[secret]`, never its text. */
function printable(config: ProvisionerConfig): ProvisionerConfig {
  if ((config as { kubeconfig?: unknown }).kubeconfig === undefined) return config;
  return { ...config, kubeconfig: "[secret]" } as ProvisionerConfig;
}

/** `aws (us-east-1 at http://127.0.0.1:5000)`, `ovn (context admin@test)`: how messages name a provisioner config. */
export function describe(config: ProvisionerConfig): string {
  const c = config as unknown as Record<string, unknown>;
  const where = [
    c.region,
    c.endpoint ? `at ${String(c.endpoint)}` : undefined,
    c.context ? `context ${String(c.context)}` : undefined,
  ]
    .filter(Boolean)
    .join(" ");
  return where ? `${config.kind} (${where})` : config.kind;
}
