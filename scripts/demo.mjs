// The demo: runs examples/quickstart with the real Pulumi engine on a local file:// backend —
// preview, up, a second up that changes nothing, then destroy.
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { exampleProgram, prepareConsumerProject, repoRoot } from "./consumer.mjs";

const consumerDir = prepareConsumerProject();
const { LocalWorkspace } = createRequire(path.join(consumerDir, "package.json"))("@pulumi/pulumi/automation");
const workDir = path.join(consumerDir, "runs", "demo");
fs.rmSync(workDir, { recursive: true, force: true });
fs.mkdirSync(path.join(workDir, "backend"), { recursive: true });

const projectName = "egress-ipam-quickstart";
const stack = await LocalWorkspace.createOrSelectStack(
  {
    stackName: "demo",
    projectName,
    program: exampleProgram(path.join(repoRoot, "examples/quickstart/index.ts"), consumerDir),
  },
  {
    workDir,
    projectSettings: { name: projectName, runtime: "nodejs", main: workDir },
    envVars: {
      PULUMI_HOME: path.join(workDir, ".pulumi-home"),
      PULUMI_BACKEND_URL: `file://${path.join(workDir, "backend")}`,
      PULUMI_CONFIG_PASSPHRASE: "demo",
    },
  },
);
const out = (s) => process.stdout.write(s);
const step = (title) => out(`\n=== ${title}\n`);

try {
  step("pulumi preview");
  const events = [];
  await stack.preview({ onOutput: out, onEvent: (e) => events.push(e) });
  step("addresses planned at preview");
  for (const e of events) {
    const m = e.resourcePreEvent?.metadata;
    if (m?.type.endsWith(":IpAllocation")) out(`${m.urn.split("::").pop()}: ${m.new?.inputs?.ip}\n`);
  }
  step("pulumi up");
  const up = await stack.up({ onOutput: out });
  step("pulumi up again: nothing to change");
  const again = await stack.up({ onOutput: out });
  const changed = Object.entries(again.summary.resourceChanges ?? {}).filter(([op]) => op !== "same");
  if (changed.length) throw new Error(`second up changed ${JSON.stringify(changed)}`);
  step("stack outputs");
  for (const [k, v] of Object.entries(up.outputs)) out(`${k}: ${JSON.stringify(v.value)}\n`);
} finally {
  step("pulumi destroy");
  await stack.destroy({ onOutput: out });
  fs.rmSync(workDir, { recursive: true, force: true });
}
