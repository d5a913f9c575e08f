// The pods' sandbox image (and any other one-program image, writeBinaryImage), made here: no registry is reachable, so instead of pulling registry.k8s.io/pause the
// launcher packs controlplane/pause (built by controlplane/build.sh) into a one-layer OCI image archive that
// `ctr images import` takes. Same bytes every time (sorted tar, fixed owner and mtime), so the same digest.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export const PAUSE_IMAGE = "dev.local/simkube-fn-pause:1";

const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

const deterministicTar = [
  "--sort=name",
  "--owner=0",
  "--group=0",
  "--numeric-owner",
  "--mtime=@0",
  "--format=gnu",
];

export function ociArchitecture(arch: string = process.arch): string {
  return arch === "x64" ? "amd64" : arch;
}

interface Blob {
  mediaType: string;
  digest: string;
  size: number;
}

async function putBlob(layout: string, mediaType: string, bytes: Buffer): Promise<Blob> {
  const digest = sha256(bytes);
  await writeFile(path.join(layout, "blobs", "sha256", digest.slice("sha256:".length)), bytes);
  return { mediaType, digest, size: bytes.length };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

export interface BinaryImage {
  /** The static program, copied to /<file> in the image. */
  binary: string;
  file: string;
  /** The image's name (dev.local/...: never pulled, never resolved to a digest). */
  name: string;
  /** The image's default user, numeric (Knative's pods set runAsNonRoot). */
  user: string;
  /** Where the layout and the archive go; `<work>/<file>.oci.tar` is the archive. */
  work: string;
}

/** A one-layer OCI image archive holding one static program as its entrypoint; returns the archive's path. */
export async function writeBinaryImage(image: BinaryImage): Promise<string> {
  const { file, work } = image;
  const rootfs = path.join(work, `${file}-rootfs`);
  const layout = path.join(work, `${file}-layout`);
  await mkdir(rootfs, { recursive: true });
  await mkdir(path.join(layout, "blobs", "sha256"), { recursive: true });
  await copyFile(image.binary, path.join(rootfs, file));
  const layerFile = path.join(work, `${file}-layer.tar`);
  await exec("tar", [...deterministicTar, "--mode=0755", "-C", rootfs, "-cf", layerFile, file]);
  const layerBytes = await readFile(layerFile);
  const layer = await putBlob(layout, "application/vnd.oci.image.layer.v1.tar", layerBytes);
  const config = await putBlob(
    layout,
    "application/vnd.oci.image.config.v1+json",
    json({
      architecture: ociArchitecture(),
      os: "linux",
      config: { Entrypoint: [`/${file}`], User: image.user },
      rootfs: { type: "layers", diff_ids: [layer.digest] },
    }),
  );
  const manifest = await putBlob(
    layout,
    "application/vnd.oci.image.manifest.v1+json",
    json({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config,
      layers: [layer],
    }),
  );
  const annotations = {
    "io.containerd.image.name": image.name,
    "org.opencontainers.image.ref.name": image.name,
  };
  await writeFile(
    path.join(layout, "index.json"),
    JSON.stringify({ schemaVersion: 2, manifests: [{ ...manifest, annotations }] }),
  );
  await writeFile(path.join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  const archive = path.join(work, `${file}.oci.tar`);
  await exec("tar", [...deterministicTar, "-C", layout, "-cf", archive, "oci-layout", "index.json", "blobs"]);
  return archive;
}

/** Writes `<work>/pause.oci.tar` holding the image `name` with `pauseBinary` as /pause; returns its path. */
export function writePauseImage(pauseBinary: string, work: string, name = PAUSE_IMAGE): Promise<string> {
  return writeBinaryImage({ binary: pauseBinary, file: "pause", name, user: "65535:65535", work });
}
