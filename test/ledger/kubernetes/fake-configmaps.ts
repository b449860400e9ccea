// ConfigMaps of one namespace as the API server keeps them, in memory, for protocol tests: creates
// fail with 409 AlreadyExists, updates and deletes with 409 Conflict on a stale resourceVersion or
// uid, an update that changes nothing keeps the resourceVersion (as the API server does), and every
// request waits a random moment before and after it takes effect, so that concurrent operations
// interleave differently from run to run. A gate holds chosen requests, for one interleaving exactly.
import type * as k8s from "@kubernetes/client-node";
import type { KubeClients } from "../../../provider/kube/kube-config";

const status = (code: number, reason: string) =>
  Object.assign(new Error(`${code} ${reason}`), { code, body: { reason, message: reason } });

/** The namespace's ConfigMaps and the clients that reach them. */
export class FakeConfigMaps {
  readonly objects = new Map<string, k8s.V1ConfigMap>();
  private revision = 0;
  private uids = 0;
  /** Requests served, by verb. */
  readonly calls: Record<string, number> = {};
  /**
   * The most the values of an object's data may hold, in bytes, by name (default 1 MiB): a create
   * or update over it fails with 422 Invalid, as the API server refuses a ConfigMap over 1 MiB.
   */
  readonly maxValueBytes = new Map<string, number>();

  /** @param jitterMs - the longest wait before and after a request takes effect (0: none). */
  constructor(private readonly jitterMs = 2) {}

  /** Clients whose core API is this namespace (nothing else is implemented). */
  clients(): KubeClients {
    const core = {
      readNamespacedConfigMap: (a: { name: string }) => this.serve("get", () => this.get(a.name), a.name),
      listNamespacedConfigMap: (a: { labelSelector?: string }) =>
        this.serve("list", () => ({
          items: this.list(a.labelSelector),
          metadata: { resourceVersion: `${this.revision}` },
        })),
      createNamespacedConfigMap: (a: { body: k8s.V1ConfigMap }) =>
        this.serve("create", () => this.create(a.body), a.body.metadata?.name),
      replaceNamespacedConfigMap: (a: { name: string; body: k8s.V1ConfigMap }) =>
        this.serve("update", () => this.replace(a.name, a.body), a.name),
      deleteNamespacedConfigMap: (a: {
        name: string;
        body?: { preconditions?: { uid?: string; resourceVersion?: string } };
      }) => this.serve("delete", () => this.delete(a.name, a.body?.preconditions), a.name),
    };
    return { core, server: "https://fake", context: "fake" } as unknown as KubeClients;
  }

  /** Names of the objects whose role label is `role`. */
  named(role: string): string[] {
    return [...this.objects.values()]
      .filter((o) => o.metadata?.labels?.["egress-ipam/role"] === role)
      .map((o) => o.metadata!.name!)
      .sort();
  }

  /**
   * Holds the next request of `verb` on the object `name` before it takes effect: `reached`
   * resolves when it arrives, and it goes on once `open` is called.
   */
  gate(verb: string, name: string): { reached: Promise<void>; open: () => void } {
    let arrived!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.gates.push({ verb, name, arrived, opened });
    return { reached, open };
  }

  private readonly gates: { verb: string; name: string; arrived: () => void; opened: Promise<void> }[] = [];

  private async serve<T>(verb: string, apply: () => T, name = ""): Promise<T> {
    this.calls[verb] = (this.calls[verb] ?? 0) + 1;
    const i = this.gates.findIndex((g) => g.verb === verb && g.name === name);
    if (i >= 0) {
      const [g] = this.gates.splice(i, 1);
      g!.arrived();
      await g!.opened;
    }
    await this.pause();
    const result = structuredClone(apply());
    await this.pause();
    return result;
  }

  private pause(): Promise<void> {
    const ms = Math.random() * this.jitterMs;
    return new Promise((resolve) => (ms < 0.3 ? setImmediate(resolve) : setTimeout(resolve, ms)));
  }

  private get(name: string): k8s.V1ConfigMap {
    const o = this.objects.get(name);
    if (!o) throw status(404, "NotFound");
    return o;
  }

  private list(selector = ""): k8s.V1ConfigMap[] {
    const wanted = selector
      .split(",")
      .filter(Boolean)
      .map((kv) => kv.split("="));
    return [...this.objects.values()].filter((o) => wanted.every(([k, v]) => o.metadata?.labels?.[k!] === v));
  }

  private tooLong(body: k8s.V1ConfigMap): void {
    const max = this.maxValueBytes.get(body.metadata?.name ?? "") ?? 1024 * 1024;
    const bytes = Object.values(body.data ?? {}).reduce((n, v) => n + Buffer.byteLength(v), 0);
    if (bytes > max) throw status(422, `Invalid: Too long: must have at most ${max} bytes`);
  }

  private create(body: k8s.V1ConfigMap): k8s.V1ConfigMap {
    this.tooLong(body);
    const name = body.metadata!.name!;
    if (this.objects.has(name)) throw status(409, "AlreadyExists");
    const o = structuredClone(body);
    o.metadata = { ...o.metadata, uid: `uid-${++this.uids}`, resourceVersion: `${++this.revision}` };
    this.objects.set(name, o);
    return o;
  }

  private replace(name: string, body: k8s.V1ConfigMap): k8s.V1ConfigMap {
    const o = this.get(name);
    const rv = body.metadata?.resourceVersion;
    if (rv !== undefined && rv !== o.metadata!.resourceVersion) throw status(409, "Conflict");
    this.tooLong(body);
    const same =
      JSON.stringify(o.data ?? {}) === JSON.stringify(body.data ?? {}) &&
      JSON.stringify(o.metadata?.labels ?? {}) === JSON.stringify(body.metadata?.labels ?? {});
    if (same) return o; // no change: the API server keeps the resourceVersion
    const next = structuredClone(body);
    next.metadata = { ...next.metadata, uid: o.metadata!.uid, resourceVersion: `${++this.revision}` };
    this.objects.set(name, next);
    return next;
  }

  private delete(name: string, pre?: { uid?: string; resourceVersion?: string }): object {
    const o = this.get(name);
    if (pre?.uid !== undefined && pre.uid !== o.metadata!.uid) throw status(409, "Conflict");
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== o.metadata!.resourceVersion)
      throw status(409, "Conflict");
    this.objects.delete(name);
    return {};
  }
}
