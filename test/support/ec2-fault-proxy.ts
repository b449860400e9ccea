// A thin HTTP proxy in front of moto that injects what moto cannot: EC2 error answers
// (RequestLimitExceeded throttling, PrivateIpAddressLimitExceeded, …) and latency. It records every
// call by EC2 action, so tests can count attempts. Erasable TypeScript, no relative imports: the
// benchmarks load it too.
import * as http from "node:http";
import type * as net from "node:net";

/** An error answer to inject. */
export interface Fault {
  /** The EC2 action it applies to (e.g. `AssignPrivateIpAddresses`); every action when omitted. */
  action?: string;
  /** How many matching calls get the error (default 1); later calls pass through. */
  times?: number;
  /** The EC2 error code, e.g. `RequestLimitExceeded`. */
  code: string;
  message?: string;
  /** HTTP status (default 503 for throttling and server codes, 400 otherwise). */
  status?: number;
}

/** A canned answer to inject in place of moto's (e.g. a first page carrying a NextToken). */
export interface CannedAnswer {
  /** The EC2 action it answers. */
  action: string;
  /** The XML body, answered with HTTP 200. */
  body: string;
}

/**
 * A change to moto's answers of one action, for a behaviour moto lacks (e.g. `Ipv4Prefixes` on
 * interfaces): applied to every answer of the action, until the proxy is cleared.
 */
export interface Rewrite {
  action: string;
  /** Takes moto's XML body (and the calls answered so far) and returns the one to answer with. */
  body: (xml: string, calls: readonly ProxiedCall[]) => string;
}

/** One call seen by the proxy. */
export interface ProxiedCall {
  action: string;
  /** The request's query parameters (`Filter.1.Name`, `AllowReassignment`, …). */
  params: Record<string, string>;
  /** Milliseconds since the proxy started, when the call arrived. */
  at: number;
  /** The injected error code, if the call got one. */
  fault?: string;
  /** Milliseconds from arrival to the answer's end, once answered (injected latency included). */
  durationMs?: number;
  /** The HTTP status of the answer, once answered. */
  status?: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give this to the client instead of moto's endpoint. */
  endpoint: string;
  /** Delay added before every call is answered; may be changed at any time. */
  latencyMs: number;
  /** Every call so far, in arrival order. */
  calls: ProxiedCall[];
  /** The most calls that were being answered at one time since the last {@link clear}. */
  maxInFlight: number;
  /** Queues an error answer. */
  inject(fault: Fault): void;
  /** Queues a canned answer for the next call of its action. */
  answer(canned: CannedAnswer): void;
  /** Rewrites every later answer of an action (see {@link Rewrite}). */
  rewrite(rewrite: Rewrite): void;
  /** Drops queued faults, canned answers, rewrites and the call log. */
  clear(): void;
  /** The calls of one action. */
  count(action: string): number;
  stop(): Promise<void>;
}

const serverCodes = /^(RequestLimitExceeded|Throttling|InternalError|ServiceUnavailable|Unavailable)$/;

function errorXml(code: string, message: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code>` +
    `<Message>${message}</Message></Error></Errors><RequestID>fault-proxy</RequestID></Response>`
  );
}

/** Starts the proxy on a free loopback port, forwarding to `target` (moto's endpoint). */
export async function startFaultProxy(
  target: string,
  options: { latencyMs?: number } = {},
): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const faults: (Fault & { left: number })[] = [];
  const canned: CannedAnswer[] = [];
  const rewrites: Rewrite[] = [];
  const started = Date.now();
  const sockets = new Set<net.Socket>();
  let inFlight = 0;

  const proxy: FaultProxy = {
    endpoint: "",
    latencyMs: options.latencyMs ?? 0,
    calls: [],
    maxInFlight: 0,
    inject: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    answer: (c) => canned.push(c),
    rewrite: (r) => rewrites.push(r),
    clear() {
      faults.length = 0;
      canned.length = 0;
      rewrites.length = 0;
      proxy.calls.length = 0;
      proxy.maxInFlight = 0;
    },
    count: (action) => proxy.calls.filter((c) => c.action === action).length,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const params = Object.fromEntries(new URLSearchParams(body.toString()));
      const action = params.Action ?? "";
      const call: ProxiedCall = { action, params, at: Date.now() - started };
      proxy.calls.push(call);
      proxy.maxInFlight = Math.max(proxy.maxInFlight, ++inFlight);
      res.on("close", () => {
        inFlight--;
        call.durationMs = Date.now() - started - call.at;
        call.status = res.statusCode;
      });
      if (proxy.latencyMs > 0) await new Promise((r) => setTimeout(r, proxy.latencyMs));
      const fault = faults.find((f) => f.left > 0 && (f.action === undefined || f.action === action));
      if (fault) {
        fault.left--;
        call.fault = fault.code;
        const status = fault.status ?? (serverCodes.test(fault.code) ? 503 : 400);
        res.writeHead(status, { "content-type": "text/xml" });
        res.end(errorXml(fault.code, fault.message ?? `injected ${fault.code}`));
        return;
      }
      const answer = canned.findIndex((c) => c.action === action);
      if (answer >= 0) {
        const [c] = canned.splice(answer, 1);
        res.writeHead(200, { "content-type": "text/xml" });
        res.end(c!.body);
        return;
      }
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host, "content-length": String(body.length) },
          agent,
        },
        (up) => {
          const changes = rewrites.filter((r) => r.action === action);
          if (changes.length === 0 || up.statusCode !== 200) {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            return;
          }
          const parts: Buffer[] = [];
          up.on("data", (c: Buffer) => parts.push(c));
          up.on("end", () => {
            const xml = changes.reduce((x, r) => r.body(x, proxy.calls), Buffer.concat(parts).toString());
            const { "content-length": _length, "transfer-encoding": _encoding, ...headers } = up.headers;
            res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(xml)) });
            res.end(xml);
          });
        },
      );
      forward.on("error", (e) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`fault proxy: upstream ${target} failed: ${e.message}`);
      });
      forward.end(body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxy;
}

/**
 * A {@link Rewrite} for what moto lacks about Elastic IPs: it associates an Elastic IP with an
 * interface and answers DescribeAddresses with the interface's primary private IP, whatever
 * `PrivateIpAddress` AssociateAddress named (EC2 associates it with that secondary address). This
 * puts back, in each associated address of the answer, the private IP that the last successful
 * AssociateAddress of its allocation named (moto lists no association it ended).
 */
export const eipPrivateIps: Rewrite = {
  action: "DescribeAddresses",
  body: (xml, calls) => {
    // The answer's top-level items (an address's tagSet has items of its own).
    let out = "";
    let depth = 0;
    let from = 0;
    for (const tag of xml.matchAll(/<\/?item>/g)) {
      const closing = tag[0] === "</item>";
      if (!closing && depth++ === 0) {
        out += xml.slice(from, tag.index);
        from = tag.index;
      }
      if (closing && --depth === 0) {
        const end = tag.index + tag[0].length;
        const item = xml.slice(from, end);
        const allocation = /<allocationId>([^<]+)<\/allocationId>/.exec(item)?.[1];
        const named = calls.findLast(
          (c) => c.action === "AssociateAddress" && c.status === 200 && c.params.AllocationId === allocation,
        )?.params.PrivateIpAddress;
        const element = /<privateIpAddress>[^<]*<\/privateIpAddress>/;
        out +=
          named && element.test(item)
            ? item.replace(element, `<privateIpAddress>${named}</privateIpAddress>`)
            : item;
        from = end;
      }
    }
    return out + xml.slice(from);
  },
};
