// Counts the writes a ledger makes to the API server: the clients it is given wrapped so that every
// create, replace, patch and delete of the core API (ConfigMaps: claims, markers, quota counters,
// the definition) and of the coordination API (the Lease) is counted on its way to the real server.
// Erasable TypeScript without imports, so the ledger worker (CommonJS) and the benchmarks load it.

/** Writes counted so far, by kind. */
export interface WriteCounts {
  /** Creates, replaces, patches and deletes of ConfigMaps. */
  configMaps: number;
  /** Of those, writes of marker objects (label egress-ipam/role=marker, or a delete by a block's name). */
  markers: number;
  /** Of those, writes of quota counters. */
  counters: number;
  /** Writes of Leases. */
  leases: number;
}

type Api = Record<string, unknown>;
type Args = { name?: string; body?: { metadata?: { labels?: Record<string, string> } } };

const isWrite = (method: string): boolean => /^(create|replace|patch|delete)/.test(method);

function counted(api: Api, count: (method: string, args: Args) => void): Api {
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== "string" || typeof value !== "function" || !isWrite(prop)) return value;
      return (args: Args, ...rest: unknown[]) => {
        count(prop, args ?? {});
        return (value as (...a: unknown[]) => unknown).call(target, args, ...rest);
      };
    },
  });
}

/**
 * `clients` (a KubeClients) with its core and coordination APIs counting writes into the returned
 * `counts`; reset them by assigning 0.
 */
export function countingClients<T extends { core: unknown; coordination: unknown }>(
  clients: T,
): { clients: T; counts: WriteCounts } {
  const counts: WriteCounts = { configMaps: 0, markers: 0, counters: 0, leases: 0 };
  const core = counted(clients.core as Api, (method, args) => {
    if (!/ConfigMap/.test(method)) return;
    counts.configMaps++;
    const role = args.body?.metadata?.labels?.["egress-ipam/role"];
    const name = args.name ?? "";
    if (role === "marker" || (method.startsWith("delete") && /-\d+$/.test(name))) counts.markers++;
    if (role === "quota" || /\.quota-[0-9a-f]{16}$/.test(name)) counts.counters++;
  });
  const coordination = counted(clients.coordination as Api, (method) => {
    if (/Lease/.test(method)) counts.leases++;
  });
  return { clients: { ...clients, core, coordination }, counts };
}
