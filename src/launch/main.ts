import { Agent } from "./agent.js";
import { helpText, parseArgs, UsageError } from "./cli_options.js";
import { resolveConfig, type LaunchConfig } from "./launch_config.js";
import { exitCodeForSignal } from "./signals.js";
import { clearRankFiles, mergeTraces } from "../track/trace/merge.js";

const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * ringrun's entry point: returns the process exit code. 0 when every worker of the job
 * succeeded; 1 when the job failed (after the summary); 2 for bad command-line input; 128+N when
 * ringrun was stopped by signal N. Problems are reported as one line on stderr.
 */
export async function main(argv: readonly string[]): Promise<number> {
  let config: LaunchConfig;
  try {
    const parsed = parseArgs(argv);
    if (parsed.given.has("help")) {
      process.stdout.write(helpText());
      return 0;
    }
    config = resolveConfig(parsed, process.env, process.cwd());
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`ringrun: error: ${error.message}\n`);
    return 2;
  }

  const quiet = process.env.RINGTORCH_QUIET === "1";
  const agent = new Agent(config, {
    info: (message) => {
      if (!quiet) process.stderr.write(`ringrun: ${message}\n`);
    },
    warn: (message) => process.stderr.write(`ringrun: ${message}\n`),
  });

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals === 1) {
      agent.requestStop(signal);
      return;
    }
    // A second Ctrl-C means now: no grace period.
    agent.killWorkers();
    process.exit(exitCodeForSignal(signal));
  };
  const lastResort = (): void => agent.killWorkers();
  if (config.traceDir !== undefined) clearRankFiles(config.traceDir);
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  process.on("exit", lastResort);
  try {
    return await agent.run();
  } catch (error) {
    process.stderr.write(`ringrun: error: ${(error as Error).message.replace(/\s*\n\s*/g, " ")}\n`);
    if (process.env.RINGTORCH_DEBUG === "1") process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    process.off("exit", lastResort);
    agent.killWorkers();
    if (config.traceDir !== undefined) reportTrace(config.traceDir, quiet);
  }
}

/** Merges the ranks' timelines (those of failed ranks as far as they got) and says where. */
function reportTrace(dir: string, quiet: boolean): void {
  try {
    const merged = mergeTraces(dir);
    if (merged === null) process.stderr.write(`ringrun: --trace ${dir}: no rank wrote a trace (does the script import ringtorch?)\n`);
    else if (!quiet) process.stderr.write(`ringrun: trace of ${merged.files.length} rank file(s) in ${merged.path}; open it in https://ui.perfetto.dev\n`);
  } catch (err) {
    process.stderr.write(`ringrun: could not merge the trace in ${dir}: ${(err as Error).message}\n`);
  }
}
