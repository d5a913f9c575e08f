// What a deletion looked like from reschedule-delete's side: its DELETE reviews, reduced to the facts the
// function judges by (who, request.name, deletionTimestamp, grace, DisruptionTarget, phase, dryRun). The same
// reduction serves the real API server and the API double, so the two can be compared row by row.

import type { AdmissionRequest } from "../../../shared/admission/review.js";

export interface DeleteReviewRow {
  user: string;
  /** request.name ("" for a DeleteCollection, e.g. the namespace controller's). */
  name: string;
  deletionTimestamp: boolean;
  /** oldObject.metadata.deletionGracePeriodSeconds, when set. */
  grace?: number;
  /** The DisruptionTarget=True condition's reason, when present. */
  disruptionTarget?: string;
  phase?: string;
  dryRun: boolean;
}

interface PodLike {
  metadata?: { uid?: string; deletionTimestamp?: unknown; deletionGracePeriodSeconds?: number };
  status?: { phase?: string; conditions?: { type?: string; status?: string; reason?: string }[] };
}

const SHORT_USERS: [RegExp, string][] = [
  [/^system:serviceaccount:kube-system:(.+)$/, "$1"],
  [/^system:serviceaccount:simkube:sk-ctrl-sa$/, "driver"],
];

/** Controller accounts by their name alone; the test's admin and KWOK by role. */
export function shortUser(username: string | undefined, roles: Record<string, string> = {}): string {
  if (!username) return "";
  if (roles[username]) return roles[username] as string;
  for (const [pattern, replacement] of SHORT_USERS)
    if (pattern.test(username)) return username.replace(pattern, replacement);
  return username;
}

export function deleteReviewRow(
  request: AdmissionRequest,
  roles: Record<string, string> = {},
): DeleteReviewRow {
  const old = (request.oldObject ?? {}) as PodLike;
  const row: DeleteReviewRow = {
    user: shortUser(request.userInfo?.username, roles),
    name: request.name ?? "",
    deletionTimestamp: Boolean(old.metadata?.deletionTimestamp),
    dryRun: request.dryRun === true,
  };
  if (typeof old.metadata?.deletionGracePeriodSeconds === "number")
    row.grace = old.metadata.deletionGracePeriodSeconds;
  const target = old.status?.conditions?.find((c) => c.type === "DisruptionTarget" && c.status === "True");
  if (target) row.disruptionTarget = target.reason ?? "";
  if (old.status?.phase) row.phase = old.status.phase;
  return row;
}

/** The DELETE reviews of one pod (by uid), in arrival order. */
export function deleteReviewsOfPod(
  requests: readonly AdmissionRequest[],
  uid: string,
  roles: Record<string, string> = {},
): DeleteReviewRow[] {
  return requests
    .filter((r) => r.operation === "DELETE" && (r.oldObject as PodLike | undefined)?.metadata?.uid === uid)
    .map((r) => deleteReviewRow(r, roles));
}

/** One line per review for a table: `user name=… ts grace=… DT=… phase dry`. */
export function describeRow(row: DeleteReviewRow): string {
  return [
    row.user,
    `name=${row.name === "" ? '""' : "set"}`,
    row.deletionTimestamp ? "deletionTimestamp" : "no-deletionTimestamp",
    row.grace === undefined ? "" : `grace=${row.grace}`,
    row.disruptionTarget ? `DisruptionTarget=${row.disruptionTarget}` : "",
    row.phase ?? "",
    row.dryRun ? "dryRun" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/**
 * Consecutive reviews of one step as one. The real API server re-runs delete admission when the update or the
 * storage delete retries (a conflict, or a stale watch-cache copy), so one step can be reviewed twice: with the
 * same pod (identical rows), or first with a copy from before the deleting controller's own status patch and
 * then with the pod as patched (the same user, name, phase of the delete and dry run; the later row adds the
 * DisruptionTarget the earlier lacks). Seen in CI on 2026-12-07 for the taint manager's delete: node-controller
 * without, then with DeletionByTaintManager, one clone.
 */
export function collapseRepeats(rows: readonly DeleteReviewRow[]): DeleteReviewRow[] {
  const sameStep = (a: DeleteReviewRow, b: DeleteReviewRow) =>
    a.user === b.user &&
    a.name === b.name &&
    a.deletionTimestamp === b.deletionTimestamp &&
    a.dryRun === b.dryRun;
  const staleCopyOf = (row: DeleteReviewRow, next: DeleteReviewRow | undefined) =>
    next !== undefined && sameStep(row, next) && !row.disruptionTarget && Boolean(next.disruptionTarget);
  return rows.filter(
    (row, i) =>
      !staleCopyOf(row, rows[i + 1]) && (i === 0 || JSON.stringify(row) !== JSON.stringify(rows[i - 1])),
  );
}
