/**
 * ringrun's command line, flag for flag after torchrun's: the same names and defaults, each
 * accepted as --kebab-case and --snake_case, `--flag value` or `--flag=value`. The first
 * argument that is not a flag is the training script; everything after it is the script's own.
 */

export interface FlagSpec {
  /** Canonical kebab-case name without the leading dashes. */
  readonly name: string;
  readonly short?: string;
  readonly aliases?: readonly string[];
  readonly takesValue: boolean;
  readonly metavar?: string;
  /** The default as torchrun documents it; undefined for flags without one. */
  readonly default?: string;
  readonly help: string;
}

export const FLAGS: readonly FlagSpec[] = [
  { name: "nnodes", takesValue: true, metavar: "N|MIN:MAX", default: "1:1", help: "Number of nodes, or the range MIN:MAX of nodes an elastic job accepts (MIN:MAX needs --rdzv-backend c10d)." },
  { name: "nproc-per-node", takesValue: true, metavar: "N|auto|cpu", default: "1", help: "Worker processes per node; 'auto' and 'cpu' mean one per CPU core." },
  { name: "node-rank", takesValue: true, metavar: "RANK", default: "0", help: "This node's rank in a static multi-node job (c10d assigns ranks itself)." },
  { name: "master-addr", takesValue: true, metavar: "ADDR", default: "127.0.0.1", help: "Address of node 0, where its ringrun hosts the job's store (static rendezvous)." },
  { name: "master-port", takesValue: true, metavar: "PORT", default: "29500", help: "Port of the job's store on node 0 (static rendezvous)." },
  { name: "rdzv-backend", takesValue: true, metavar: "static|c10d", default: "static", help: "Rendezvous: 'static' (fixed nodes, ranks from --node-rank) or 'c10d' (ringrun's store; nodes numbered as they join, MIN:MAX allowed)." },
  { name: "rdzv-endpoint", takesValue: true, metavar: "HOST[:PORT]", default: "", help: "Address of the rendezvous store; for static it replaces --master-addr/--master-port, for c10d the port defaults to 29400." },
  { name: "rdzv-id", takesValue: true, metavar: "ID", default: "none", help: "Run id shared by the job's nodes; names the log folder and RINGTORCH_RUN_ID (Slurm: SLURM_JOB_ID)." },
  { name: "rdzv-conf", takesValue: true, metavar: "K=V,...", default: "", help: "Rendezvous settings in seconds: join_timeout (alias timeout, 600), last_call_timeout (30), heartbeat_timeout (30), exit_barrier_timeout (300)." },
  { name: "standalone", takesValue: false, help: "Single-node job with its store on a free local port and a fresh run id and token; ignores the rendezvous flags." },
  { name: "max-restarts", takesValue: true, metavar: "N", default: "0", help: "How many times the worker group is restarted after a failure before the job fails." },
  { name: "monitor-interval", takesValue: true, metavar: "SECONDS", default: "0.1", help: "How often ringrun checks the workers and the other nodes." },
  { name: "term-timeout", takesValue: true, metavar: "SECONDS", default: "30", help: "(ringtorch) Grace period between SIGTERM and SIGKILL when the workers are stopped." },
  { name: "start-method", takesValue: true, metavar: "spawn|fork|forkserver", default: "spawn", help: "Accepted for torchrun compatibility; Node workers are always spawned." },
  { name: "role", takesValue: true, metavar: "NAME", default: "default", help: "Role name of the workers (ROLE_NAME, and the console prefix [<role><rank>]:)." },
  { name: "module", short: "m", takesValue: false, help: "The script is a module specifier, resolved from the working directory like `node -e 'import(SPEC)'`." },
  { name: "no-python", aliases: ["no-node"], takesValue: false, help: "Run the script as an executable, without node in front (no automatic error file, no parent watch)." },
  { name: "run-path", takesValue: false, help: "Run the script through ringrun's own Node executable and Node flags (process.execArgv) from ringrun's entry module." },
  { name: "node-snapshot", takesValue: false, help: "(ringtorch) Start workers from Node's startup snapshot, as plain node does; by default they run with --no-node-snapshot, whose scavenges (a tensor arena asks for many) cost a third as much, for ~60 ms more startup. A node flag choosing either in NODE_OPTIONS wins; also RINGTORCH_NODE_SNAPSHOT=1." },
  { name: "log-dir", takesValue: true, metavar: "DIR", help: "Base folder for <run-id>/attempt_<n>/<local-rank>/{stdout.log,stderr.log,error.json}; a temporary folder when unset." },
  { name: "redirects", short: "r", takesValue: true, metavar: "STD", default: "0", help: "Send worker output to log files only: 0 none, 1 stdout, 2 stderr, 3 both; or per local rank, e.g. 0:1,1:2." },
  { name: "tee", short: "t", takesValue: true, metavar: "STD", default: "0", help: "Send worker output to log files and the console; same values as --redirects." },
  { name: "local-ranks-filter", takesValue: true, metavar: "R,R,...", default: "", help: "Show only these local ranks' output on the console (log files keep everything)." },
  { name: "trace", takesValue: true, metavar: "DIR", help: "(ringtorch) Record every rank's timeline (forward, backward, optimizer, data, checkpoints; collectives and DDP buckets) into DIR and merge it into DIR/trace.json for ui.perfetto.dev; also RINGTORCH_TRACE." },
  { name: "local-addr", takesValue: true, metavar: "ADDR", help: "This node's address as reported to the other nodes and in failure summaries (default: the host name)." },
  { name: "help", short: "h", takesValue: false, help: "Show this help and exit." },
];

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export interface ParsedArgs {
  /** Flags given on the command line, by canonical name; booleans hold "1". */
  readonly given: ReadonlyMap<string, string>;
  readonly script: string | undefined;
  readonly scriptArgs: readonly string[];
}

const byName = new Map<string, FlagSpec>();
const byShort = new Map<string, FlagSpec>();
for (const flag of FLAGS) {
  byName.set(flag.name, flag);
  for (const alias of flag.aliases ?? []) byName.set(alias, flag);
  if (flag.short !== undefined) byShort.set(flag.short, flag);
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const given = new Map<string, string>();
  let i = 0;
  const valueFor = (flag: FlagSpec, inline: string | undefined, spelled: string): string => {
    if (!flag.takesValue) {
      if (inline !== undefined) throw new UsageError(`${spelled} takes no value, but got '${inline}'`);
      return "1";
    }
    if (inline !== undefined) return inline;
    i += 1;
    if (i >= argv.length) throw new UsageError(`${spelled} expects a value (${flag.metavar ?? "VALUE"})`);
    return argv[i]!;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      i += 1;
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const spelled = eq < 0 ? arg : arg.slice(0, eq);
      const flag = byName.get(spelled.slice(2).replace(/_/g, "-"));
      if (flag === undefined) throw new UsageError(`unknown option ${spelled} (see ringrun --help)`);
      given.set(flag.name, valueFor(flag, eq < 0 ? undefined : arg.slice(eq + 1), spelled));
    } else if (arg.startsWith("-") && arg.length > 1) {
      const flag = byShort.get(arg[1]!);
      if (flag === undefined) throw new UsageError(`unknown option ${arg} (see ringrun --help)`);
      const attached = arg.length > 2 ? arg.slice(2) : undefined;
      given.set(flag.name, valueFor(flag, attached, `-${flag.short}`));
    } else {
      break;
    }
  }
  const script = argv[i];
  return { given, script, scriptArgs: script === undefined ? [] : argv.slice(i + 1) };
}

export function helpText(): string {
  const lines = [
    "usage: ringrun [options] <script.ts|script.js|-m module|executable> [script args...]",
    "",
    "Starts --nproc-per-node worker processes on this node, hosts or joins the job's rendezvous",
    "store, restarts the whole group on a failure (up to --max-restarts) and reports the root cause.",
    "Every option can also be given as PET_<NAME> in the environment (e.g. PET_NPROC_PER_NODE=4);",
    "under Slurm or a Kubernetes PyTorchJob the node count, node rank and master address come from",
    "the scheduler's variables unless an option sets them. RINGTORCH_STORE_TOKEN (or a file only",
    "this user can read, named by RINGTORCH_STORE_TOKEN_FILE) must hold the same secret on every node",
    "of a multi-node job.",
    "",
    "options:",
  ];
  for (const flag of FLAGS) {
    const names = [flag.short === undefined ? "" : `-${flag.short}, `, `--${flag.name}`, ...(flag.aliases ?? []).map((a) => `, --${a}`)].join("");
    const head = `  ${names}${flag.takesValue ? ` ${flag.metavar ?? "VALUE"}` : ""}`;
    const tail = flag.default !== undefined && flag.default !== "" ? ` (default: ${flag.default})` : "";
    lines.push(head, `      ${flag.help}${tail}`);
  }
  return lines.join("\n") + "\n";
}
