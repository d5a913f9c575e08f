// The functions this project is made of: one list for the CLI, the runtime and the deployment manifests.

export const FUNCTION_NAMES = ["mutate-create", "reschedule-delete"] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export function isFunctionName(name: string): name is FunctionName {
  return (FUNCTION_NAMES as readonly string[]).includes(name);
}
