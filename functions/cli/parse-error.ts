// node:util parseArgs' errors, as a one-line message for our users. Its own text ends with advice about "--"
// and positionals ("To specify a positional argument starting with a '-', place it at the end of the command
// after '--'"), which none of our commands needs and which hides the flag that was wrong.

/** The error's message, without Node's advice about `--`. */
export function argumentErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\. To specify a positional argument.*$/s, "").trim();
}
