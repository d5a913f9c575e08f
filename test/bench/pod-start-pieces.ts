// A pod's start taken apart (pure): from when the pod was first listed until its containers ran, out of the
// pod listings (scheduled, IP published) and containerd's log (pod-start-log.ts). Every piece is the time
// since the one before it, so they add up; a piece the log or the listings did not show is undefined.

import type { PodStart } from "./pod-start-log.js";

/** What listing the pod every few ms showed, in ms since the epoch. */
export interface PodSighting {
  name?: string;
  /** When a pod was first listed. */
  createdAt?: number;
  /** When it was first listed with a node. */
  scheduledAt?: number;
  /** When it was first listed with an IP (the kubelet's status update after its next look at the runtime). */
  ipAt?: number;
  /** When it was first listed Ready. */
  readyAt?: number;
  ip?: string;
}

export interface StartPieces {
  /** Listed → bound to the node (the scheduler). */
  scheduledMs?: number;
  /** → the kubelet asked for the sandbox (its admission, the pod's cgroups, waiting for volumes). */
  kubeletMs?: number;
  /** → sandbox ready (pause started, CNI). */
  sandboxMs?: number;
  /** → the first container created (the kubelet's own step between, and the create). */
  createMs?: number;
  /** → the first container started (runc). */
  startMs?: number;
  /** → every other container started, one after the other. */
  othersMs?: number;
  /** The pod's IP first listed, counted from the first container's start (negative: before it). */
  ipAfterStartMs?: number;
}

const gap = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined ? undefined : to - from;

export function startPieces(seen: PodSighting, log: PodStart | undefined): StartPieces {
  const [first, ...others] = log?.containers ?? [];
  const lastStarted = others.at(-1)?.started;
  const pieces: StartPieces = {
    scheduledMs: gap(seen.createdAt, seen.scheduledAt),
    kubeletMs: gap(seen.scheduledAt, log?.sandboxAsked),
    sandboxMs: gap(log?.sandboxAsked, log?.sandboxReady),
    createMs: gap(log?.sandboxReady, first?.created),
    startMs: gap(first?.created, first?.started),
    othersMs:
      others.length === 0 ? (first?.started === undefined ? undefined : 0) : gap(first?.started, lastStarted),
    ipAfterStartMs: gap(first?.started, seen.ipAt),
  };
  return Object.fromEntries(Object.entries(pieces).filter(([, v]) => v !== undefined)) as StartPieces;
}

export const START_PIECES = [
  "scheduledMs",
  "kubeletMs",
  "sandboxMs",
  "createMs",
  "startMs",
  "othersMs",
  "ipAfterStartMs",
] as const satisfies readonly (keyof StartPieces)[];
