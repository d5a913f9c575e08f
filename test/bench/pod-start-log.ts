// One pod's start as containerd's CRI plugin logged it (pure: text in, times out). containerd 1.6 logs each CRI
// call the kubelet makes at info level, once when asked and once when done, with nanosecond timestamps:
//   RunPodSandbox for &PodSandboxMetadata{Name:<pod>,...}                       the kubelet asks for the sandbox
//   RunPodSandbox for &PodSandboxMetadata{Name:<pod>,...} returns sandbox id "<sid>"   pause running, network set up
//   CreateContainer within sandbox "<sid>" for container &ContainerMetadata{Name:<c>,...}
//   CreateContainer within sandbox "<sid>" for &ContainerMetadata{Name:<c>,...} returns container id "<cid>"
//   StartContainer for "<cid>"  /  StartContainer for "<cid>" returns successfully
// The kubelet makes these calls one after the other for a pod (sandbox, then each container in the spec's
// order), so the gaps between them are the kubelet's own work and the calls' durations the runtime's.

export interface ContainerStart {
  name: string;
  /** The kubelet asked to create it (image checked, config built, env resolved). */
  createAsked: number;
  /** Created (the rootfs snapshot prepared, the spec written). */
  created?: number;
  /** Started (runc ran it: the process is running). */
  started?: number;
}

export interface PodStart {
  /** The kubelet asked for the sandbox: everything before it is scheduling, admission, cgroups, volumes. */
  sandboxAsked: number;
  /** The sandbox's pause process running and its network set up (CNI). */
  sandboxReady?: number;
  /** In the order the kubelet created them. */
  containers: ContainerStart[];
}

interface LogLine {
  at: number;
  msg: string;
}

/** `time="..." level=info msg="..."`: the time in ms since the epoch and the message with its quotes undone. */
export function parseLogLine(line: string): LogLine | undefined {
  const time = /^time="([^"]+)"/.exec(line)?.[1];
  const msg = /\smsg="((?:[^"\\]|\\.)*)"/.exec(line)?.[1];
  if (time === undefined || msg === undefined) return undefined;
  const at = parseNanoTime(time);
  if (at === undefined) return undefined;
  return { at, msg: msg.replace(/\\(.)/g, "$1") };
}

/** RFC 3339 with up to nine fraction digits, as ms since the epoch with the sub-ms part kept. */
export function parseNanoTime(text: string): number | undefined {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!m?.[1] || !m[3]) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  return seconds + Number(`0.${m[2] ?? "0"}`) * 1000;
}

/** The start of the pod named `podName` (its last sandbox in the log), or undefined when the log has none. */
export function podStartFromLog(text: string, podName: string): PodStart | undefined {
  const lines = text.split("\n").map(parseLogLine);
  const sandboxFor = `RunPodSandbox for &PodSandboxMetadata{Name:${podName},`;
  let start: PodStart | undefined;
  let sandboxId: string | undefined;
  const containerIds = new Map<string, ContainerStart>();
  for (const line of lines) {
    if (!line) continue;
    const { at, msg } = line;
    if (msg.startsWith(sandboxFor)) {
      const id = / returns sandbox id "([0-9a-f]+)"$/.exec(msg)?.[1];
      if (id === undefined) {
        start = { sandboxAsked: at, containers: [] };
        sandboxId = undefined;
        containerIds.clear();
      } else if (start) {
        start.sandboxReady = at;
        sandboxId = id;
      }
      continue;
    }
    if (!start || sandboxId === undefined) continue;
    noteContainerCall(start, sandboxId, containerIds, at, msg);
  }
  return start;
}

function noteContainerCall(
  start: PodStart,
  sandboxId: string,
  ids: Map<string, ContainerStart>,
  at: number,
  msg: string,
): void {
  const within = `CreateContainer within sandbox "${sandboxId}" for `;
  if (msg.startsWith(within)) {
    const name = /&ContainerMetadata\{Name:([^,]+),/.exec(msg)?.[1];
    if (name === undefined) return;
    const id = / returns container id "([0-9a-f]+)"$/.exec(msg)?.[1];
    const container = start.containers.find((c) => c.name === name);
    if (id === undefined) start.containers.push({ name, createAsked: at });
    else if (container) {
      container.created = at;
      ids.set(id, container);
    }
    return;
  }
  const started = /^StartContainer for "([0-9a-f]+)" returns successfully$/.exec(msg)?.[1];
  const container = started === undefined ? undefined : ids.get(started);
  if (container) container.started = at;
}
