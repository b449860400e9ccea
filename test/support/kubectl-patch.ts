// The `kubectl patch` commands `pulumi-egress-ipam check` prints, run against the test cluster the
// way kubectl would send them (there is no kubectl binary here): the context's credentials, a PATCH
// of the cluster-scoped object with the printed JSON patch.
import * as https from "node:https";
import { kube } from "./kube";

/** What the API server answered: its status code and body. */
export interface PatchAnswer {
  status: number;
  body: string;
}

const form = /^kubectl --context (\S+) patch ([a-z]+)\.([a-z0-9.-]+) (\S+) --type=json -p '(\[.*\])'$/;

/**
 * Runs one printed command (`kubectl --context C patch <kind>.<group> <name> --type=json -p '<patch>'`);
 * a fix of several objects is several commands joined with ` && `, run in order until one fails.
 * @throws Error when a command is not of that form (so a changed format fails the test).
 */
export async function kubectlPatch(command: string): Promise<PatchAnswer[]> {
  const answers: PatchAnswer[] = [];
  for (const one of command.split(" && ")) {
    const m = form.exec(one);
    if (!m) throw new Error(`not a kubectl JSON patch command this helper knows: ${one}`);
    const [, context, kind, group, name, patch] = m;
    const answer = await send(context!, `/apis/${group}/v1/${kind}s/${name}`, patch!);
    answers.push(answer);
    if (answer.status >= 300) break;
  }
  return answers;
}

async function send(context: string, path: string, body: string): Promise<PatchAnswer> {
  const { config } = kube(context);
  const url = new URL(config.getCurrentCluster()!.server + path);
  const options: https.RequestOptions = {
    method: "PATCH",
    hostname: url.hostname,
    port: url.port,
    path: url.pathname,
    headers: { "Content-Type": "application/json-patch+json" },
  };
  await config.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = https.request(options, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once("error", reject);
    req.end(body);
  });
}
