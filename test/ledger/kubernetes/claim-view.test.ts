// The claim view against a scripted list and watch: what it knows after each event, when it lists
// again, and that nothing older overwrites something newer.
import type * as k8s from "@kubernetes/client-node";
import { describe, expect, it, vi } from "vitest";
import { claimName } from "../../../provider/ledger/kubernetes/claim-names";
import { ClaimStore, parseClaim } from "../../../provider/ledger/kubernetes/claim-store";
import { ClaimView } from "../../../provider/ledger/kubernetes/claim-view";
import type { KubeClients } from "../../../provider/kube/kube-config";

const pool = "egress";
const object = (ip: string, rv: number, owner = "urn:a"): k8s.V1ConfigMap => ({
  metadata: {
    name: claimName(pool, ip),
    resourceVersion: String(rv),
    uid: `uid-${ip}`,
    labels: { "egress-ipam/pool": pool, "egress-ipam/role": "claim" },
  },
  data: { address: ip, state: "claim", stack: "o/p/s", owner, seq: "1" },
});

/**
 * A store whose list answers `listed` (counting calls), and a watcher the test drives; with
 * `refuse`, every watch ends as the client ends one the API server answers with that status: its
 * end called before the watch call returns.
 */
function world(listed: k8s.V1ConfigMap[], listRv = "10", refuse?: number) {
  let lists = 0;
  const core = {
    listNamespacedConfigMap: async () => {
      lists++;
      return { items: listed, metadata: { resourceVersion: listRv } };
    },
  };
  const store = new ClaimStore(
    { core, server: "https://k", context: "c" } as unknown as KubeClients,
    "ns",
    pool,
  );
  const watches: {
    query: Record<string, unknown>;
    send: (phase: string, o: k8s.V1ConfigMap) => void;
    end: () => void;
    aborted: boolean;
  }[] = [];
  const view = new ClaimView(
    store,
    async (_path, query, onEvent, onEnd) => {
      const controller = new AbortController();
      const w = {
        query,
        send: onEvent,
        end: () => onEnd(undefined),
        get aborted() {
          return controller.signal.aborted;
        },
      };
      watches.push(w);
      if (refuse !== undefined) onEnd(Object.assign(new Error("Forbidden"), { statusCode: refuse }));
      return controller;
    },
    50,
  );
  const owners = async () => Object.fromEntries((await view.claims()).map((c) => [c.ip, c.owner]));
  return { view, watches, owners, lists: () => lists };
}

describe("ClaimView", () => {
  it("lists once, then follows the watch from the list's resourceVersion", async () => {
    const w = world([object("10.0.0.2", 5)], "10");
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a" });
    expect(w.watches[0]!.query).toMatchObject({
      resourceVersion: "10",
      labelSelector: "egress-ipam/pool=egress,egress-ipam/role=claim",
    });
    w.watches[0]!.send("ADDED", object("10.0.0.3", 11, "urn:b"));
    w.watches[0]!.send("MODIFIED", object("10.0.0.2", 12, "urn:c"));
    w.watches[0]!.send("BOOKMARK", { metadata: { resourceVersion: "13" } });
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:c", "10.0.0.3": "urn:b" });
    w.watches[0]!.send("DELETED", object("10.0.0.3", 14, "urn:b"));
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:c" });
    expect(w.lists()).toBe(1);
  });

  it("keeps this process's newer write over an older event, and a write after a delete event", async () => {
    const w = world([object("10.0.0.2", 5)]);
    await w.view.claims();
    w.view.record("10.0.0.2", parseClaim(object("10.0.0.2", 20, "urn:mine")));
    w.watches[0]!.send("MODIFIED", object("10.0.0.2", 15, "urn:other")); // before our write
    w.watches[0]!.send("DELETED", object("10.0.0.2", 16, "urn:other")); // before our write too
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:mine" });
    w.watches[0]!.send("DELETED", object("10.0.0.2", 21, "urn:mine"));
    expect(await w.owners()).toEqual({});
    w.view.record("10.0.0.4", parseClaim(object("10.0.0.4", 22)));
    w.view.record("10.0.0.4", undefined); // this process deleted it
    expect(await w.owners()).toEqual({});
  });

  it.each([
    ["the watch ends", (w: ReturnType<typeof world>) => w.watches[0]!.end()],
    [
      "the watch reports an error (a compaction's 410)",
      (w: ReturnType<typeof world>) => w.watches[0]!.send("ERROR", { metadata: {} }),
    ],
  ])("lists again after %s, and ignores the old watch", async (_, breakIt) => {
    const w = world([object("10.0.0.2", 5)]);
    await w.view.claims();
    breakIt(w);
    expect(w.watches[0]!.aborted).toBe(true);
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a" });
    expect(w.lists()).toBe(2);
    w.watches[0]!.send("ADDED", object("10.0.0.9", 30)); // late event of the old watch
    expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a" });
    expect(w.watches).toHaveLength(2);
  });

  it("ends its watch when unused, and lists again at the next use", async () => {
    const w = world([object("10.0.0.2", 5)]);
    await w.view.claims();
    await new Promise((r) => setTimeout(r, 120));
    expect(w.watches[0]!.aborted).toBe(true);
    await w.view.claims();
    expect(w.lists()).toBe(2);
  });

  it.each([403, 401])(
    "a watch the API server refuses (%i) never empties the pool: every use lists, and a warning names the permission",
    async (status) => {
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
      try {
        const w = world([object("10.0.0.2", 5), object("10.0.0.3", 6, "urn:b")], "10", status);
        for (let i = 1; i <= 3; i++) {
          expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a", "10.0.0.3": "urn:b" });
          expect(w.lists()).toBe(i);
        }
        expect(w.watches).toHaveLength(1);
        const warned = stderr.mock.calls.map((c) => String(c[0])).filter((m) => /refused to watch/.test(m));
        expect(warned).toHaveLength(1);
        expect(warned[0]).toMatch(
          /configmaps in namespace "ns", \d+ Forbidden.*grant the verb watch on configmaps/,
        );
      } finally {
        stderr.mockRestore();
      }
    },
  );

  it.each([429, 500])(
    "a watch that fails to start (%i) leaves the use its list, and the next use tries to watch again",
    async (status) => {
      const w = world([object("10.0.0.2", 5)], "10", status);
      expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a" });
      expect(await w.owners()).toEqual({ "10.0.0.2": "urn:a" });
      expect(w.lists()).toBe(2);
      expect(w.watches).toHaveLength(2);
    },
  );
});
