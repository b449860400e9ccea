// moto's EC2 emulator for tests and benchmarks: start and stop a server on a free loopback port,
// and build a small VPC with running instances in it. Written with erasable TypeScript only and
// without relative imports, so that the benchmarks (.mjs) can load it with Node's type stripping.
import {
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeNetworkInterfacesCommand,
  EC2Client,
  RunInstancesCommand,
  type NetworkInterface,
  type _InstanceType,
} from "@aws-sdk/client-ec2";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

/** Credentials moto accepts; the provisioner reads them through the default chain (environment). */
export const motoCredentials: Record<string, string> = {
  AWS_ACCESS_KEY_ID: "testing",
  AWS_SECRET_ACCESS_KEY: "testing",
  AWS_SESSION_TOKEN: "testing",
  AWS_EC2_METADATA_DISABLED: "true",
};

/** A running moto server. */
export interface MotoServer {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  port: number;
  /** Forgets every resource (POST /moto-api/reset). */
  reset(): Promise<void>;
  /** Stops the server and waits for it to exit. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound and released; moto binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The moto_server that scripts/setup-moto.sh installed, else the one on PATH. */
function motoBinary(): string {
  const local = path.join(process.cwd(), ".tools", "bin", "moto_server");
  return fs.existsSync(local) ? local : "moto_server";
}

/** Starts moto on 127.0.0.1 and waits until it answers. @throws when it does not within `timeoutMs`. */
export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const port = await freePort();
  const child = spawn(motoBinary(), ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  let spawnError: Error | undefined;
  child.once(
    "error",
    (e) => (spawnError = new Error(`cannot start moto_server (run scripts/setup-moto.sh): ${e.message}`)),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  const server: MotoServer = {
    endpoint,
    port,
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: "POST" });
      if (!res.ok) throw new Error(`moto reset failed: HTTP ${res.status}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError) throw spawnError;
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}:\n${log}`);
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`moto_server did not answer on ${endpoint} within ${timeoutMs} ms:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An EC2 client for an emulator endpoint, with moto's test credentials and no SDK retries. */
export function ec2Client(endpoint: string, region: string): EC2Client {
  return new EC2Client({
    region,
    endpoint,
    maxAttempts: 1,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  });
}

/** What {@link createWorld} builds. */
export interface WorldSpec {
  region: string;
  /** Availability zone → the subnet CIDR to create there. */
  subnets: Record<string, string>;
  /** Instances to run per zone: each with its type, tags and, optionally, its primary IP. */
  instances: Record<string, { type?: string; tags?: Record<string, string>; privateIp?: string }[]>;
}

/** A built world: subnet IDs and instance IDs per zone. */
export interface World {
  vpcId: string;
  subnetIds: Record<string, string>;
  instanceIds: Record<string, string[]>;
}

/** Creates a VPC (10.0.0.0/16), one subnet per zone and running instances in them, via the EC2 API. */
export async function createWorld(ec2: EC2Client, spec: WorldSpec): Promise<World> {
  const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: "10.0.0.0/16" }));
  const vpcId = vpc.Vpc!.VpcId!;
  const subnetIds: Record<string, string> = {};
  const instanceIds: Record<string, string[]> = {};
  for (const [zone, cidr] of Object.entries(spec.subnets)) {
    const subnet = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: zone }),
    );
    subnetIds[zone] = subnet.Subnet!.SubnetId!;
  }
  const launches = Object.entries(spec.instances).map(async ([zone, list]) => {
    const ids: string[] = [];
    for (const i of list) {
      const tags = Object.entries(i.tags ?? {}).map(([Key, Value]) => ({ Key, Value }));
      const run = await ec2.send(
        new RunInstancesCommand({
          ImageId: "ami-12c6146b",
          InstanceType: (i.type ?? "m5.large") as _InstanceType,
          MinCount: 1,
          MaxCount: 1,
          SubnetId: subnetIds[zone],
          PrivateIpAddress: i.privateIp,
          TagSpecifications: tags.length > 0 ? [{ ResourceType: "instance", Tags: tags }] : undefined,
        }),
      );
      ids.push(run.Instances![0]!.InstanceId!);
    }
    instanceIds[zone] = ids;
  });
  await Promise.all(launches);
  return { vpcId, subnetIds, instanceIds };
}

/** Every network interface in the subnets (filtered by subnet ID, all pages). */
export async function interfacesIn(ec2: EC2Client, subnetIds: string[]): Promise<NetworkInterface[]> {
  const found: NetworkInterface[] = [];
  let NextToken: string | undefined;
  do {
    const out = await ec2.send(
      new DescribeNetworkInterfacesCommand({
        Filters: [{ Name: "subnet-id", Values: subnetIds }],
        NextToken,
      }),
    );
    found.push(...(out.NetworkInterfaces ?? []));
    NextToken = out.NextToken;
  } while (NextToken);
  return found;
}

/** The secondary private IPs of the interfaces in the subnets, by instance ID (instances with none left out). */
export async function secondaryIps(ec2: EC2Client, subnetIds: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const eni of await interfacesIn(ec2, subnetIds)) {
    const owner = eni.Attachment?.InstanceId ?? eni.NetworkInterfaceId!;
    const ips = (eni.PrivateIpAddresses ?? []).filter((a) => !a.Primary).map((a) => a.PrivateIpAddress!);
    if (ips.length > 0) out[owner] = [...(out[owner] ?? []), ...ips].sort();
  }
  return out;
}
