// Answers are written together, once the reviews read in this turn of the event loop are judged, instead of
// one by one as each is ready. Each write runs the receiver's side of the connection too when the caller is on
// loopback (Knative's queue-proxy is, in the same pod): TCP delivery and waking the reader, in our process's
// time, between two reviews. Judging a burst's reviews back to back and then writing their answers back to
// back costs less CPU per review for the same answers. In one `npm run bench` (medians of 3 rounds, before
// the cap below), mutate-create's CPU per CREATE review fell from 132 to 79 µs against the build before, and
// the bare node:http server's from 61 to 41 µs when it wrote the same way (docs/performance.md, "History").
//
// Nothing waits for more work: the writes run in the check phase (setImmediate) right after the poll phase
// that read the reviews, so a lone review's answer is held back by microseconds, never by a timer.
//
// At most MAX_BATCH answers wait: every waiting review keeps its request and response alive, and with a whole
// turn's reviews waiting (64 in the bench) Node 24's V8 grew its young generation until the RSS during a
// burst reached 200 MiB, against 105-118 MiB with 16 and ~108 MiB writing each at once. CPU per CREATE review
// with 16 was 0.80 of the unbounded batch's in the same bench rounds (teardown 1.00).

/** How many answers may wait for the end of the turn; the one that fills the batch writes it at once. */
export const MAX_BATCH = 16;

/** Queues a write for the end of this turn of the event loop. */
export type WriteLater = (write: () => void) => void;

/**
 * A queue of writes flushed after the current poll phase, or as soon as `maxBatch` are waiting, in the order
 * they were queued. A write that throws is reported to `onError` and does not keep the others from running.
 */
export function createWriteBatch(onError: (err: unknown) => void, maxBatch = MAX_BATCH): WriteLater {
  let pending: Array<() => void> = [];
  let scheduled = false;
  const flush = () => {
    const writes = pending;
    pending = [];
    for (const write of writes) {
      try {
        write();
      } catch (err) {
        onError(err);
      }
    }
  };
  const flushAtEndOfTurn = () => {
    scheduled = false;
    flush();
  };
  return (write) => {
    pending.push(write);
    if (pending.length >= maxBatch) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flushAtEndOfTurn);
    }
  };
}
