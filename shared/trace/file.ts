// Reads a trace from a file: a regular file only, within a deadline, with a version to tell a change by.
//
// Opening a FIFO for reading blocks until a writer comes (a libuv thread-pool thread held, the load hung for
// good), and a device such as /dev/zero never ends. So the path is stat'ed first and anything but a regular
// file is refused without being opened; the file is then opened with O_NONBLOCK (which does not block on a
// FIFO swapped in meanwhile) and checked again through its descriptor, which is what is actually read. A
// regular file can still be slow (NFS, a stuck disk): the whole read has a deadline, after which the load
// fails at once and the read is abandoned (its stream destroyed, its descriptor closed when the kernel lets
// go of it).

import { type BigIntStats, constants } from "node:fs";
import { open, stat } from "node:fs/promises";
import { addAbortSignal } from "node:stream";
import { withDeadline } from "../base/index.js";
import { readCapped } from "./capped-bytes.js";

export interface FileLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** The bytes, and the version they were read at (see fileVersion). */
export interface VersionedBytes {
  bytes: Uint8Array;
  version: string;
}

/**
 * A file's version: device, inode, size and modification time in ns. Written in place, its size or mtime
 * changes; replaced (a rename, a ConfigMap's symlink swap), its inode does.
 */
export function fileVersion(s: BigIntStats): string {
  return `file:${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}

/** What a non-regular file is, for the error. */
export function fileKind(s: BigIntStats): string {
  if (s.isFIFO()) return "a FIFO";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isDirectory()) return "a directory";
  if (s.isSocket()) return "a socket";
  return "not a regular file";
}

/** The file's current version, from stat alone (never opened, so a FIFO cannot block it), within the deadline. */
export function currentFileVersion(
  path: string,
  timeoutMs: number,
  fail: (why: string) => Error,
): Promise<string> {
  const check = stat(path, { bigint: true }).then((s) => {
    if (!s.isFile()) throw fail(`not a regular file (${fileKind(s)})`);
    return fileVersion(s);
  });
  return withDeadline(check, timeoutMs, () => {
    throw fail(`timed out after ${timeoutMs} ms`);
  });
}

/** Reads a regular file whole, capped in bytes and in time; anything else is refused. */
export function readRegularFile(
  path: string,
  limits: FileLimits,
  fail: (why: string) => Error,
): Promise<VersionedBytes> {
  const abandon = new AbortController();
  const reading = readOpened(path, limits.maxBytes, abandon.signal, fail);
  return withDeadline(reading, limits.timeoutMs, () => {
    abandon.abort();
    throw fail(`timed out after ${limits.timeoutMs} ms`);
  });
}

async function readOpened(
  path: string,
  maxBytes: number,
  signal: AbortSignal,
  fail: (why: string) => Error,
): Promise<VersionedBytes> {
  const named = await stat(path, { bigint: true });
  if (!named.isFile()) throw fail(`not a regular file (${fileKind(named)})`);
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const opened = await file.stat({ bigint: true });
    if (!opened.isFile()) throw fail(`not a regular file (${fileKind(opened)})`);
    // Past the deadline already (the open was slow): nobody waits for the bytes.
    signal.throwIfAborted();
    // A regular file's size only sizes the buffer; the count still decides (it may grow while read).
    const stream = addAbortSignal(signal, file.createReadStream({ autoClose: false }));
    const bytes = await readCapped(stream, maxBytes, fail, Number(opened.size));
    return { bytes, version: fileVersion(opened) };
  } finally {
    await file.close();
  }
}
