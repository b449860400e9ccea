/**
 * Seeded generation of edit sequences over the model of world.ts: every edit is chosen from the
 * world as it stands, so it applies; the same seed gives the same sequence everywhere.
 */
import { Rng } from "./rng";
import {
  applyEdit,
  cloudHosts,
  domains,
  emptyWorld,
  namesInUse,
  type Edit,
  type PlatformKind,
  type PoolFamily,
  type World,
  type WorldKind,
} from "./world";

/** A sequence to run: its seed and its edits, in order (a step is one edit, then preview and up). */
export interface Sequence {
  seed: number;
  edits: Edit[];
}

const families: readonly (readonly [PoolFamily, number])[] = [
  ["ipv4", 3],
  ["ipv6", 1],
  ["dual", 2],
];

/** A name for a new resource: sometimes one a removed or renamed resource left behind. */
function nameFor(rng: Rng, w: World): string | undefined {
  const inUse = namesInUse(w);
  const freed = w.freedNames.filter((n) => !inUse.has(n));
  return freed.length > 0 && rng.chance(0.4) ? rng.pick(freed) : undefined;
}

function freshName(rng: Rng, w: World, prefix: string): string {
  const inUse = namesInUse(w);
  const reuse = nameFor(rng, w);
  if (reuse) return reuse;
  for (let i = 0; ; i++) if (!inUse.has(`${prefix}${i}`)) return `${prefix}${i}`;
}

/** A subset of the failure domains, never empty. */
function someDomains(rng: Rng): string[] {
  return rng.weighted<string[]>([
    [["za"], 2],
    [["zb"], 1],
    [["za", "zb"], 3],
  ]);
}

/** The families input of an EgressIp of `pool` (now and then one the pool cannot take). */
function egressFamilies(rng: Rng, family: PoolFamily): "ipv4" | "ipv6" | "dual" | undefined {
  if (family === "dual")
    return rng.weighted<"ipv4" | "ipv6" | "dual" | undefined>([
      ["dual", 4],
      ["ipv4", 2],
      ["ipv6", 2],
      [undefined, 1],
    ]);
  return rng.weighted<"ipv4" | "ipv6" | "dual" | undefined>([
    [undefined, 4],
    [family, 3],
    ["dual", 1],
  ]);
}

const allHosts = (w: World) => Object.values(w.hosts).flat();

/** What a generator may draw besides edits of the program. */
export interface GenerateOptions {
  /** Now and then, a program edit whose `up` is killed partway (`{ op: "killed" }`). */
  kills?: boolean;
}

/** Edits that only change what a person or a failure does, not the program: never killed. */
const outsideProgram = new Set<Edit["op"]>([
  "refresh",
  "unassign",
  "handOver",
  "terminate",
  "nodeDown",
  "killed",
]);

/**
 * One edit that fits `w`. With `kills`, one program edit in ten has its `up` killed 0.2–4 s in:
 * where the kill lands depends on the machine, so a replay runs the same programs but may kill at
 * another point (the seed fixes the delay, not the engine's progress).
 */
export function generateEdit(rng: Rng, w: World, options: GenerateOptions = {}): Edit {
  const edit = programEdit(rng, w);
  if (options.kills && !outsideProgram.has(edit.op) && rng.chance(0.1))
    return { op: "killed", afterMs: rng.int(200, 4000), edit };
  return edit;
}

function programEdit(rng: Rng, w: World): Edit {
  const pools = w.pools;
  const holders = w.holders;
  const egress = holders.filter((h) => h.kind === "egress");
  const allocs = holders.filter((h) => h.kind === "alloc");
  const prefixes = holders.filter((h) => h.kind === "prefix");
  // Pools of the cloud world's subnets take aws EgressIps only: an allocation there would not see
  // the instances' addresses.
  const plain = pools.filter((p) => !p.zone);
  const choices: [() => Edit, number][] = [
    [
      () => ({
        op: "addPool",
        family: rng.weighted(families),
        ...(rng.chance(0.3) ? { strategy: "lowest-free" as const } : {}),
      }),
      plain.length === 0 ? (w.cloud ? 3 : 100) : plain.length < 3 ? (w.cloud ? 1 : 2) : 0,
    ],
  ];
  if (w.cloud) choices.push(...cloudEdits(rng, w));
  if (w.shared) choices.push(...tenantEdits(rng, w));
  if (w.platform) choices.push(...platformEdits(rng, w));
  if (pools.length > 0) {
    choices.push(
      [
        () => {
          const pool = rng.pick(plain);
          const single = pool.family !== "dual";
          return {
            op: "addAlloc",
            pool: pool.id,
            // A secret one low in the pool, where the plans of later holders go: an address hidden
            // from the stack's taken set would be handed out again.
            ...(single && rng.chance(0.25)
              ? rng.chance(0.3)
                ? { ip: rng.int(1, 6), secret: true as const }
                : { ip: rng.int(1, 62) }
              : {}),
            ...(!single && rng.chance(0.4) ? { family: rng.pick(["ipv4", "ipv6"] as const) } : {}),
            ...optionalName(rng, w),
          };
        },
        plain.length > 0 ? 4 : 0,
      ],
      [
        () => {
          const pool = rng.pick(plain);
          return {
            op: "addEgress",
            pool: pool.id,
            domains: someDomains(rng),
            ...optional("families", egressFamilies(rng, pool.family)),
            ...(!w.platform && rng.chance(0.15) ? { host: rng.pick(allHosts(w)) } : {}),
            ...optionalName(rng, w),
          };
        },
        // A platform world is there for its EgressIps.
        plain.length > 0 ? (w.platform ? 10 : 4) : 0,
      ],
      [() => ({ op: "exclude", pool: rng.pick(pools).id, offset: rng.int(1, 62) }), 1],
      [
        () => ({
          op: "strategy",
          pool: rng.pick(pools).id,
          ...(rng.chance(0.5) ? { strategy: "lowest-free" as const } : {}),
        }),
        1,
      ],
      [
        () => ({
          op: "renamePool",
          pool: rng.pick(pools).id,
          alias: rng.chance(0.7),
          name: freshName(rng, w, "pool"),
        }),
        1,
      ],
    );
    const single = plain.filter((p) => p.family !== "dual");
    if (single.length > 0)
      choices.push([
        () => ({
          op: "addPrefix",
          pool: rng.pick(single).id,
          prefixLength: prefixLength(rng),
          ...optionalName(rng, w),
        }),
        2,
      ]);
  }
  if (holders.length > 0) {
    choices.push(
      [() => ({ op: "remove", holder: rng.pick(holders).id }), 2],
      [
        () => ({
          op: "rename",
          holder: rng.pick(holders).id,
          alias: rng.chance(0.7),
          name: freshName(rng, w, "r"),
        }),
        3,
      ],
      [() => ({ op: "refresh" }), 1],
    );
  }
  if (allocs.length > 0)
    choices.push([
      () => {
        const h = rng.pick(allocs);
        const pool = pools.find((p) => p.id === h.pool)!;
        return {
          op: "requestIp",
          holder: h.id,
          ...(pool.family !== "dual" && rng.chance(0.6) ? { ip: rng.int(1, 62) } : {}),
        };
      },
      1,
    ]);
  if (prefixes.length > 0)
    choices.push([
      () => ({ op: "prefixLength", holder: rng.pick(prefixes).id, prefixLength: prefixLength(rng) }),
      1,
    ]);
  const noneEgress = egress.filter((h) => !h.aws);
  if (noneEgress.length > 0)
    choices.push(
      [() => ({ op: "domains", holder: rng.pick(egress).id, domains: someDomains(rng) }), 2],
      [
        () => {
          const h = rng.pick(egress);
          const pool = pools.find((p) => p.id === h.pool)!;
          return { op: "families", holder: h.id, ...optional("families", egressFamilies(rng, pool.family)) };
        },
        3,
      ],
    );
  // The `none` provisioner's own: a pin, and its hosts (a platform world's hosts are Nodes).
  if (noneEgress.length > 0 && !w.platform)
    choices.push(
      [
        () => ({
          op: "pin",
          holder: rng.pick(noneEgress).id,
          ...(rng.chance(0.5) ? { host: rng.pick(allHosts(w)) } : {}),
        }),
        1,
      ],
      [
        () => {
          const domain = rng.pick(domains);
          const now = w.hosts[domain] ?? [];
          const extra = `${domain[1]}${rng.int(1, 4)}`;
          const hosts =
            rng.chance(0.5) || now.length <= 1
              ? [...new Set([...now, extra])]
              : now.filter((h) => h !== rng.pick(now));
          return { op: "hosts", domain, hosts };
        },
        1,
      ],
    );
  const make = rng.weighted(choices.filter(([, weight]) => weight > 0));
  return make();
}

/** Edits of a cloud world: its zone pools, aws EgressIps and their settings, and what people and hosts do. */
function cloudEdits(rng: Rng, w: World): [() => Edit, number][] {
  const out: [() => Edit, number][] = [];
  const zones = w.pools.flatMap((p) => (p.zone ? [p.zone] : []));
  const missing = domains.filter((d) => !zones.includes(d));
  if (missing.length > 0)
    out.push([
      () => ({ op: "addPool", family: "ipv4", zone: rng.pick(missing) }),
      zones.length === 0 ? 60 : 8,
    ]);
  if (zones.length > 0)
    out.push([
      () => {
        const chosen = zones.length === 2 ? someDomains(rng) : zones;
        return {
          op: "addEgress",
          pool: w.pools.find((p) => p.zone === chosen[0])!.id,
          domains: chosen,
          aws: {
            hostTags: rng.chance(0.5) ? "role" : "role+team",
            ...(rng.chance(0.6) ? { elasticIps: "allocate" as const } : {}),
          },
          ...optionalName(rng, w),
        };
      },
      8,
    ]);
  const aws = w.holders.flatMap((h) => (h.kind === "egress" && h.aws ? [h] : []));
  if (aws.length > 0)
    out.push(
      [
        () => {
          const h = rng.pick(aws);
          return {
            op: "hostTags",
            holder: h.id,
            hostTags: h.aws!.hostTags === "role" ? "role+team" : "role",
          };
        },
        3,
      ],
      [
        () => {
          const h = rng.pick(aws);
          const now = h.aws!.elasticIps;
          const next = rng.pick(([undefined, "allocate", "adoptOwn"] as const).filter((e) => e !== now));
          return { op: "elasticIps", holder: h.id, ...(next ? { elasticIps: next } : {}) };
        },
        6,
      ],
      [() => ({ op: "unassign", holder: rng.pick(aws).id }), 2],
      [() => ({ op: "handOver", holder: rng.pick(aws).id }), 1],
    );
  const up = Object.values(cloudHosts)
    .flat()
    .filter((h) => !h.endsWith("3") && !w.down.includes(h));
  if (aws.length > 0 && w.down.length < 2 && up.length > 0 && !w.handedOver)
    out.push([() => ({ op: "terminate", host: rng.pick(up) }), 2]);
  return out;
}

/** Edits of a platform world: an EgressIp's pods narrowed or widened, a Node failing. */
function platformEdits(rng: Rng, w: World): [() => Edit, number][] {
  const out: [() => Edit, number][] = [];
  const egress = w.holders.filter((h) => h.kind === "egress");
  if (egress.length > 0)
    out.push([
      () => {
        const h = rng.pick(egress);
        return { op: "podSelector", holder: h.id, on: !h.podSelector };
      },
      // ocp-static refuses podSelector: now and then, to see it refused with its code.
      w.platform === "ocp-static" ? 1 : 3,
    ]);
  const up = allHosts(w).filter((h) => !w.down.includes(h));
  if (egress.length > 0 && w.down.length < 2) out.push([() => ({ op: "nodeDown", host: rng.pick(up) }), 1]);
  return out;
}

/** Edits of a shared world's tenant stack: allocations of the program's pools, added and removed. */
function tenantEdits(rng: Rng, w: World): [() => Edit, number][] {
  const out: [() => Edit, number][] = [];
  if (w.pools.length > 0)
    out.push([
      () => {
        const pool = rng.pick(w.pools);
        const single = pool.family !== "dual";
        return {
          op: "tenantAdd",
          pool: pool.id,
          ...(single && rng.chance(0.2) ? { ip: rng.int(1, 62) } : {}),
          ...(!single && rng.chance(0.4) ? { family: rng.pick(["ipv4", "ipv6"] as const) } : {}),
          ...optionalName(rng, w),
        };
      },
      5,
    ]);
  if (w.tenant.length > 0) out.push([() => ({ op: "tenantRemove", holder: rng.pick(w.tenant).id }), 2]);
  return out;
}

function prefixLength(rng: Rng): number {
  return rng.pick([28, 29, 30]);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [k in K]: V });
}

function optionalName(rng: Rng, w: World): { name?: string } {
  const name = nameFor(rng, w);
  return name === undefined ? {} : { name };
}

/**
 * The edits `seed` gives when every one is accepted: a walk of the model alone (the runner
 * generates against the world the engine accepted, so a refused edit changes what follows).
 */
export function generateSequence(
  seed: number,
  length: number,
  kind: WorldKind = "local",
  options: GenerateOptions = {},
  platform?: PlatformKind,
): Sequence {
  const rng = new Rng(seed);
  let world = emptyWorld(kind, platform);
  const edits: Edit[] = [];
  while (edits.length < length) {
    const edit = generateEdit(rng, world, options);
    const next = applyEdit(world, edit);
    if (!next) continue; // a generated edit always fits; this only guards a model bug from looping forever
    edits.push(edit);
    world = next;
  }
  return { seed, edits };
}
