import * as net from "node:net";
import { endProcess } from "../core/process-ending";
import { aroundCalls, type ProviderImpl } from "../resources/provider-props";

/**
 * Ends a provider process whose engine is gone: a dynamic-provider process, or the egress-ipam
 * plugin. The engine (through Pulumi's Node.js provider host, for the first) starts the process with
 * its gRPC address as an argument, and the process has no way to notice that the engine died (a
 * `pulumi up` killed by a CI timeout or the OOM killer): it would run, and hold its memory and its
 * Kubernetes and EC2 clients, forever.
 *
 * How it notices, on Linux and macOS alike: one TCP connection to the engine's address, kept open
 * and idle. The kernel closes it the moment the engine process dies, so the watch costs nothing
 * while the engine lives (no polling). A close is followed by one new connection: the engine's gRPC
 * server also closes an idle connection that never sends an HTTP/2 preface (after its handshake
 * timeout), and then the new one is accepted and watched; when nobody listens at the address any
 * more (connection refused), the engine is gone. The parent process is no signal: the plugin may be
 * started through a shell wrapper that outlives the engine.
 */
export interface EngineWatch {
  /** Stops watching (the socket is closed; no exit follows). */
  stop(): void;
}

/** Watches the engine at `address` (`host:port`) and calls `gone` once when it is gone. */
export function watchEngine(address: string, gone: () => void, retryDelayMs = 250): EngineWatch {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at);
  const port = Number(address.slice(at + 1));
  let stopped = false;
  let socket: net.Socket | undefined;
  const connect = () => {
    if (stopped) return;
    let opened = false;
    let code: string | undefined;
    const s = net.connect({ host, port });
    socket = s;
    s.unref(); // never what keeps the process alive
    s.on("connect", () => (opened = true));
    s.on("data", () => undefined); // the server's HTTP/2 settings: not read
    s.on("error", (err: NodeJS.ErrnoException) => (code = err.code));
    s.on("close", () => {
      if (stopped) return;
      if (!opened && code === "ECONNREFUSED") {
        stopped = true;
        gone();
        return;
      }
      setTimeout(connect, retryDelayMs).unref();
    });
  };
  connect();
  return {
    stop() {
      stopped = true;
      socket?.destroy();
    },
  };
}

const isAddress = (arg: string | undefined): arg is string => /^[\w.-]+:\d+$/.test(arg ?? "");

/** The engine's address from a dynamic-provider process's arguments, or undefined in any other process. */
export function engineAddress(argv: string[] = process.argv): string | undefined {
  if (!/dynamic-provider/.test(argv[1] ?? "")) return undefined;
  return isAddress(argv[2]) ? argv[2] : undefined;
}

/**
 * The engine's address from a resource plugin's arguments (`process.argv.slice(2)`), read as the
 * SDK's provider `main` reads it: the first argument that is not one of the flags the engine may put
 * before it (`--logtostderr`, `-v=<n>`, `--tracing <endpoint>`). Undefined when there is none.
 */
export function pluginEngineAddress(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--logtostderr" || arg.startsWith("-v=")) continue;
    if (arg === "--tracing") {
      i++;
      continue;
    }
    return isAddress(arg) ? arg : undefined;
  }
  return undefined;
}

let inFlight = 0;
const settled: (() => void)[] = [];

/** The provider with its calls counted, so an exit can wait for the ones under way. */
export function counted(impl: ProviderImpl): ProviderImpl {
  return aroundCalls(impl, async (_method, call) => {
    inFlight++;
    try {
      return await call();
    } finally {
      inFlight--;
      if (inFlight === 0) settled.splice(0).forEach((resolve) => resolve());
    }
  });
}

/** Resolves when no counted call is under way, or after `ms`; true when they all finished. */
export function callsSettled(ms: number): Promise<boolean> {
  if (inFlight === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    settled.push(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Watches the engine at `address` (by default a dynamic-provider process's; the plugin passes its
 * own, {@link pluginEngineAddress}) and, once it is gone, gives the calls under way (a Kubernetes or
 * EC2 write) up to `graceMs` to finish, then exits. Calls still waiting for a pool's lock give up at
 * once ({@link endProcess}), so the grace is spent only on work already under way. Nobody will read their results: what an
 * interrupted write leaves is what an interrupted `pulumi up` leaves, and the next `up` repairs it.
 * Leases and holds of the process are not released: they expire after their duration, as when the
 * process is killed. Does nothing without an address (any other process).
 */
export function exitWhenEngineGone(
  address: string | undefined = engineAddress(),
  graceMs = 10_000,
): EngineWatch | undefined {
  if (!address) return undefined;
  return watchEngine(address, () => {
    endProcess(new Error(`the engine at ${address} is gone; this provider process exits`));
    void callsSettled(graceMs).then(() => process.exit(1));
    // Nobody may read this: the engine held the other end of stderr, and a write to a pipe without
    // a reader fails (EPIPE), which must not keep the process from exiting.
    process.stderr.on("error", () => undefined);
    try {
      process.stderr.write(
        `pulumi-egress-ipam: the engine at ${address} is gone; this provider process exits\n`,
      );
    } catch {
      // as above
    }
  });
}
