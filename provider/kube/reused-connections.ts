import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };

/** What @kubernetes/client-node's request context carries as its HTTP dispatcher (an undici one). */
type Dispatcher = NonNullable<ReturnType<k8s.RequestContext["getDispatcher"]>>;

/** The method of KubeConfig (2.x) that builds the dispatcher of one request. */
type MakeDispatcher = (cluster: k8s.Cluster | null, options: object) => Dispatcher | undefined;

/** Dispatchers kept per config; more TLS identities than this (a rotating client cert) close the oldest. */
const keep = 4;

/**
 * Makes every API call through `config` share one pool of keep-alive connections per TLS identity.
 *
 * @kubernetes/client-node 2.x builds a new undici Agent for every request: a TCP connection and a
 * TLS handshake each, paid on both sides, and the connection is left open until it idles out. On a
 * busy API server the handshake costs more CPU than the request (on the test cluster, ConfigMap
 * creates went from about 200 to about 600 per second with connections reused). Here the
 * agent is built once per set of TLS options (the server, proxy, CA, client certificate and key the
 * library derives for the request, so a certificate that changes on disk or from an exec plugin gets
 * connections of its own) and reused. A library without the method is left as it is.
 */
export function reuseConnections(config: k8s.KubeConfig): void {
  const self = config as unknown as { createDispatcher?: MakeDispatcher };
  const make = self.createDispatcher;
  if (typeof make !== "function") return;
  const made = new Map<string, Dispatcher | undefined>();
  self.createDispatcher = (cluster, options) => {
    const key = JSON.stringify([
      cluster?.server,
      cluster?.proxyUrl,
      config.createDispatcherOptions(cluster, options as never),
    ]);
    if (made.has(key)) return made.get(key);
    const dispatcher = make.call(config, cluster, options);
    made.set(key, dispatcher);
    if (made.size > keep) {
      const [oldest, old] = made.entries().next().value!;
      made.delete(oldest);
      void old?.close().catch(() => undefined); // requests in flight on it finish first
    }
    return dispatcher;
  };
}
