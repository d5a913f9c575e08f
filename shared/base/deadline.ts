// One way to stop waiting: race a piece of work against a timer. Used where an answer is owed by a time
// whatever the API server does (reschedule-delete's answer to a DELETE review, the sequence store's writes).

/**
 * `work`'s outcome, or, when `ms` pass first, `onLate()`'s: its value, or what it throws as a rejection.
 * The work is not cancelled; it goes on, and a late rejection of it is swallowed (nobody waits for it).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onLate: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onLate());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
