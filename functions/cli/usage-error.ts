// The CLI's one grammar for mistakes: bad arguments are a UsageError naming the command, shown as one line with
// the message and one line saying where its usage is (exit 2). Every command throws this class (or one derived
// from it), so main.ts, `trace` and `loadtest` word and prefix them the same way.

export const COMMANDS = ["serve", "replay", "trace", "manifests", "hash-pod", "loadtest", "cluster"] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Every message the CLI writes to stderr starts with this. */
export const PREFIX = "simkube-fn: ";

/** Bad arguments: exit 2, the message and a hint to `command`'s usage (or the list of commands). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super(message);
  }
}

/** What stderr shows for a usage error: the message, and on a line of its own, where to read more. */
export function usageErrorText(err: UsageError): string {
  const hint = err.command
    ? `run 'simkube-fn help ${err.command}' for its usage`
    : "run 'simkube-fn help' for the commands";
  return `${PREFIX}${err.message}\n${hint}\n`;
}

/** A deprecated flag's warning (the old spelling still works). */
export function deprecationText(old: string, replacement: string): string {
  return `${PREFIX}${old} is deprecated: use ${replacement}\n`;
}
