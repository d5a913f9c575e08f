// `simkube-fn trace build|inspect|lookup`: write test traces by hand, and see what a trace holds.
// Errors are one line naming the file and the reason; the exit status is 2 for bad usage, 1 otherwise.

import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { loadTraceForLookups, parseTrace } from "../../../shared/trace/index.js";
import { argumentErrorMessage } from "../parse-error.js";
import { PREFIX, UsageError, usageErrorText } from "../usage-error.js";
import { formatInspect, summarizeTrace } from "./inspect.js";
import { describeLifecycle, explainLookup } from "./lookup.js";
import { scenarioToTrace } from "./scenario.js";
import { encodeTrace } from "./trace-writer.js";

/** A usage error of `trace`. */
class TraceUsageError extends UsageError {
  constructor(message: string) {
    super(message, "trace");
  }
}

type Out = (line: string) => void;

export async function runTraceCommand(
  args: string[],
  out: Out = (line) => process.stdout.write(`${line}\n`),
  err: Out = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === "build") return await build(rest, out);
    if (sub === "inspect") return await inspect(rest, out);
    if (sub === "lookup") return await lookup(rest, out);
    throw new TraceUsageError(
      sub ? `trace has no subcommand "${sub}"` : 'trace needs a subcommand: "build", "inspect", "lookup"',
    );
  } catch (e) {
    if (e instanceof UsageError) {
      err(usageErrorText(e).trimEnd());
      return 2;
    }
    err(`${PREFIX}${(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, " ")}`);
    return 1;
  }
}

/** parseArgs' own errors (unknown option, missing value) are usage errors. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new TraceUsageError(argumentErrorMessage(e));
  }
}

function onePositional(positionals: string[], what: string): string {
  const [first] = positionals;
  if (positionals.length !== 1 || !first) throw new TraceUsageError(`expected one ${what}`);
  return first;
}

async function build(args: string[], out: Out): Promise<number> {
  const { values, positionals } = usage(() =>
    parseArgs({ args, options: { output: { type: "string", short: "o" } }, allowPositionals: true }),
  );
  const scenario = onePositional(positionals, "scenario file");
  const output = values.output;
  if (typeof output !== "string" || output === "")
    throw new TraceUsageError("trace build needs -o FILE.sktrace");
  let text: string;
  try {
    text = await readFile(scenario, "utf8");
  } catch (e) {
    throw new Error(`could not read scenario ${scenario}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  const bytes = encodeTrace(scenarioToTrace(text, scenario));
  // What we wrote must read back as the trace we meant (the reader is the functions' own).
  const { summary } = summarizeTrace(parseTrace(bytes));
  await writeFile(output, bytes);
  out(
    `wrote ${output}: ${bytes.length} bytes, ${summary.events} events, ${summary.indexObjects} objects, ` +
      `${summary.lifecycles} lifecycles of ${summary.owners} owners`,
  );
  return 0;
}

async function inspect(args: string[], out: Out): Promise<number> {
  const { values, positionals } = usage(() =>
    parseArgs({ args, options: { json: { type: "boolean" } }, allowPositionals: true }),
  );
  const file = onePositional(positionals, "trace file");
  const { summary, owners } = summarizeTrace(await loadTraceForLookups(file));
  if (values.json) out(JSON.stringify({ file, ...summary }));
  else for (const line of formatInspect(file, summary, owners)) out(line);
  return 0;
}

async function lookup(args: string[], out: Out): Promise<number> {
  const { values, positionals } = usage(() =>
    parseArgs({
      args,
      options: { owner: { type: "string" }, hash: { type: "string" }, seq: { type: "string" } },
      allowPositionals: true,
    }),
  );
  const file = onePositional(positionals, "trace file");
  const owner = values.owner;
  if (typeof owner !== "string") throw new TraceUsageError("trace lookup needs --owner KIND/NS/NAME");
  const hash = typeof values.hash === "string" ? values.hash : undefined;
  if (hash !== undefined && !/^\d{1,20}$/.test(hash))
    throw new TraceUsageError(`--hash must be a decimal u64, got ${hash}`);
  const seq = Number(values.seq ?? "0");
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new TraceUsageError(`--seq must be a whole number >= 0, got ${values.seq}`);
  const answer = explainLookup(await loadTraceForLookups(file), {
    owner,
    seq,
    ...(hash !== undefined ? { hash } : {}),
  });
  out(`owner      ${answer.gvk} ${answer.nsName}`);
  for (const reason of answer.reasons) out(`why        ${reason}`);
  out(`lifecycle  ${describeLifecycle(answer.lifecycle)}`);
  return 0;
}
