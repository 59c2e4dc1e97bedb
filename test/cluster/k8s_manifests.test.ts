import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { FLAGS, parseArgs } from "../../src/launch/cli_options.js";
import { type LaunchConfig, resolveConfig } from "../../src/launch/launch_config.js";
import { parseYamlDocuments, type Yaml } from "./yaml_subset.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const K8S = join(ROOT, "examples/k8s");
type Obj = { [key: string]: Yaml };
const obj = (v: Yaml | undefined, what: string): Obj => {
  assert.ok(v !== null && typeof v === "object" && !Array.isArray(v), `${what} must be a mapping`);
  return v as Obj;
};
const list = (v: Yaml | undefined, what: string): Yaml[] => {
  assert.ok(Array.isArray(v), `${what} must be a list`);
  return v;
};

/**
 * Every environment variable name ringtorch's sources read: `env.NAME`, `env["NAME"]`, helpers
 * called as `f(env, "NAME")`, constants named *_ENV, and PET_<FLAG> for each of ringrun's flags.
 */
function namesRead(): Set<string> {
  const names = new Set(FLAGS.map((f) => `PET_${f.name.toUpperCase().replace(/-/g, "_")}`));
  const walk = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : n.endsWith(".ts") ? [join(dir, n)] : []));
  for (const file of walk(join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const re of [/env\.([A-Z][A-Z0-9_]+)/g, /env\[\s*"([A-Z][A-Z0-9_]+)"\s*\]/g, /\(env, "([A-Z][A-Z0-9_]+)"/g, /_ENV = "([A-Z][A-Z0-9_]+)"/g]) {
      for (const m of text.matchAll(re)) names.add(m[1]!);
    }
  }
  return names;
}

/** The secret the header's `kubectl create secret generic NAME --from-literal=KEY=...` makes. */
function secretOf(text: string, file: string): { name: string; key: string } {
  const m = /^# kubectl create secret generic (\S+) --from-literal=([\w.-]+)=/m.exec(text);
  assert.ok(m, `${file} must say how to create the token's Secret`);
  return { name: m[1]!, key: m[2]! };
}

interface Pod {
  /** What Kubernetes and the controller put in the container's environment, before the manifest's own. */
  injected: Record<string, string>;
  container: Obj;
  annotations: Record<string, string>;
}

/** The container's environment as the kubelet builds it: injected first, the manifest's entries in order, later names winning. */
function podEnv(pod: Pod, secret: { name: string; key: string }, file: string, manifestNames: Set<string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...pod.injected };
  for (const item of list(pod.container.env ?? [], `${file}: env`)) {
    const e = obj(item, `${file}: env entry`);
    const name = String(e.name);
    manifestNames.add(name);
    if (e.value !== undefined) env[name] = String(e.value);
    else {
      const from = obj(e.valueFrom, `${file}: env ${name}.valueFrom`);
      if (from.secretKeyRef !== undefined) {
        const ref = obj(from.secretKeyRef, `${file}: ${name}.secretKeyRef`);
        assert.deepEqual({ name: ref.name, key: ref.key }, secret, `${file}: ${name} must come from the Secret the header creates`);
        env[name] = "the-job-secret";
      } else {
        const path = String(obj(from.fieldRef, `${file}: ${name}.fieldRef`).fieldPath);
        const m = /^metadata\.annotations\['([^']+)'\]$/.exec(path);
        assert.ok(m && m[1]! in pod.annotations, `${file}: ${name} reads ${path}, which the pod does not have`);
        env[name] = pod.annotations[m[1]!];
      }
    }
  }
  return env;
}

function ringrunConfig(container: Obj, env: NodeJS.ProcessEnv, file: string): LaunchConfig {
  const command = list(container.command, `${file}: command`).map(String);
  const at = command.indexOf("ringrun");
  assert.ok(at >= 0, `${file}: the container must run ringrun, got ${command.join(" ")}`);
  const cwd = mkdtempSync(join(tmpdir(), "k8s-pod-"));
  const parsed = parseArgs(command.slice(at + 1));
  writeFileSync(join(cwd, parsed.script!), "");
  return resolveConfig(parsed, env, cwd);
}

/** Every pod runs one ringrun: together they make one job of node ranks 0..n-1 around node 0's store. */
function checkJob(configs: LaunchConfig[], storeHost: string, storePort: number, nproc: number): void {
  assert.deepEqual(configs.map((c) => c.nodeRank), configs.map((_, i) => i));
  for (const c of configs) {
    assert.deepEqual(
      { maxNodes: c.maxNodes, nproc: c.nprocPerNode, host: c.storeHost, port: c.storePort, token: c.token, runId: c.runId },
      { maxNodes: configs.length, nproc, host: storeHost, port: storePort, token: "the-job-secret", runId: configs[0]!.runId },
    );
  }
  assert.notEqual(configs[0]!.runId, "none", "every pod should name the run (PET_RDZV_ID): logs and checkpoints are filed under it");
}

function checkNamesRead(names: Set<string>, file: string): void {
  const read = namesRead();
  for (const name of names) assert.ok(read.has(name), `${file} sets ${name}, which neither ringrun nor initProcessGroup reads`);
}

test("PyTorchJob: the operator's variables and the manifest's make one ringrun job on every pod", () => {
  const file = "pytorchjob.yaml";
  const text = readFileSync(join(K8S, file), "utf8");
  const [job] = parseYamlDocuments(text, file).map((d) => obj(d, file));
  assert.equal(job!.kind, "PyTorchJob");
  assert.equal(job!.apiVersion, "kubeflow.org/v1");
  const spec = obj(job!.spec, "spec");
  const name = String(obj(job!.metadata, "metadata").name);
  const replicaSpecs = obj(spec.pytorchReplicaSpecs, "pytorchReplicaSpecs");
  const containerOf = (type: string) => {
    const containers = list(obj(obj(obj(replicaSpecs[type], type).template, "template").spec, "spec").containers, "containers").map((c) => obj(c, "container"));
    // The operator takes the master's port from the container named "pytorch", port "pytorchjob-port".
    const c = containers.find((x) => x.name === "pytorch");
    assert.ok(c, `${file}: the ${type} needs a container named "pytorch"`);
    return c;
  };
  const port = list(containerOf("Master").ports, "Master ports").map((p) => obj(p, "port")).find((p) => p.name === "pytorchjob-port");
  assert.ok(port, `${file}: the Master's container needs a port named pytorchjob-port`);
  const masterPort = Number(port.containerPort);
  const nproc = String(spec.nprocPerNode);
  const types = ["Master", "Worker"].filter((t) => replicaSpecs[t] !== undefined);
  const total = types.reduce((n, t) => n + Number(obj(replicaSpecs[t], t).replicas), 0);
  // training-operator v1.7+ (pkg/controller.v1/pytorch/envvar.go, master.go): what it appends to every container.
  const pods: Pod[] = types.flatMap((type) =>
    Array.from({ length: Number(obj(replicaSpecs[type], type).replicas) }, (_, index) => {
      const rank = type === "Worker" ? index + 1 : index;
      const injected = {
        PYTHONUNBUFFERED: "0",
        MASTER_PORT: String(masterPort),
        MASTER_ADDR: `${name}-master-0`,
        PET_MASTER_PORT: String(masterPort),
        PET_MASTER_ADDR: `${name}-master-0`,
        WORLD_SIZE: String(total * (Number(nproc) || 1)),
        RANK: String(rank),
        PET_NPROC_PER_NODE: nproc,
        PET_NODE_RANK: String(rank),
        PET_NNODES: String(total),
      };
      return { injected, container: containerOf(type), annotations: {} };
    }),
  );
  const secret = secretOf(text, file);
  const manifestNames = new Set<string>();
  // The manifest's entries come first in the container's list, the operator's after them (they win).
  const configs = pods.map((pod) => {
    const env = podEnv({ ...pod, injected: {} }, secret, file, manifestNames);
    return ringrunConfig(pod.container, { ...env, ...pod.injected }, file);
  });
  checkJob(configs, `${name}-master-0`, masterPort, Number(nproc));
  checkNamesRead(manifestNames, file);
});

test("Indexed Job + headless Service: each pod's index is its node rank, and pod 0's name reaches the store", () => {
  const file = "indexed-job.yaml";
  const text = readFileSync(join(K8S, file), "utf8");
  const docs = parseYamlDocuments(text, file).map((d) => obj(d, file));
  const service = docs.find((d) => d.kind === "Service");
  const job = docs.find((d) => d.kind === "Job");
  assert.ok(service && job, `${file} must hold a Service and a Job`);
  const serviceName = String(obj(service.metadata, "Service metadata").name);
  const jobName = String(obj(job.metadata, "Job metadata").name);
  const sspec = obj(service.spec, "Service spec");
  assert.equal(sspec.clusterIP, "None", "the Service must be headless to give each pod a DNS name");
  // The Job controller labels its pods job-name=<job name>.
  assert.deepEqual(sspec.selector, { "job-name": jobName });
  const jspec = obj(job.spec, "Job spec");
  assert.equal(jspec.completionMode, "Indexed");
  assert.equal(jspec.parallelism, jspec.completions, "every node must run at once");
  const podSpec = obj(obj(jspec.template, "template").spec, "pod spec");
  assert.equal(podSpec.subdomain, serviceName, "pods get <pod>.<subdomain> names only when subdomain names the headless Service");
  const [container] = list(podSpec.containers, "containers").map((c) => obj(c, "container"));
  const storePort = Number(list(sspec.ports, "Service ports").map((p) => obj(p, "port"))[0]!.port);
  const n = Number(jspec.completions);
  const secret = secretOf(text, file);
  const manifestNames = new Set<string>();
  const configs = Array.from({ length: n }, (_, index) => {
    // Kubernetes 1.28+: the completion index as an annotation and as JOB_COMPLETION_INDEX; the pod's hostname is <job>-<index>.
    const pod: Pod = { injected: { JOB_COMPLETION_INDEX: String(index) }, container: container!, annotations: { "batch.kubernetes.io/job-completion-index": String(index) } };
    return ringrunConfig(container!, podEnv(pod, secret, file, manifestNames), file);
  });
  checkJob(configs, `${jobName}-0.${serviceName}`, storePort, Number(configs[0]!.nprocPerNode));
  assert.ok(configs[0]!.nprocPerNode > 1, "the example runs several ranks per pod");
  checkNamesRead(manifestNames, file);
});

test("the manifest reader follows YAML on the forms the manifests use, and refuses the rest", () => {
  const [doc] = parseYamlDocuments('a:\n  - name: x # note\n    value: "2"\n  - [b, "c d", 3]\nport: 29500\non: true\nempty:\n', "t");
  assert.deepEqual(doc, { a: [{ name: "x", value: "2" }, ["b", "c d", 3]], port: 29500, on: true, empty: null });
  assert.throws(() => parseYamlDocuments("a: &x 1\n", "t"), /t:1: "&x 1" is outside the YAML subset/);
  assert.throws(() => parseYamlDocuments("a: |\n  text\n", "t"), /outside the YAML subset/);
  assert.throws(() => parseYamlDocuments("a: 1\na: 2\n", "t"), /t:2: key a appears twice/);
});
