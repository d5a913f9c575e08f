// The function container's image and resources, checked before anything is rendered: a value Knative's
// webhook or the API server would refuse is refused here, naming the flag. Pure.
//
// Image: Knative parses it with go-containerregistry's name.ParseReference (weak validation; knative/serving
// pkg/apis/serving/k8s_validation.go), which wants a repository of 2-255 characters and only sha256 digests;
// the node's container runtime then parses it with the distribution reference grammar, which refuses
// upper case repositories and tags starting with "." or "-". The check is both.
// Resources: Kubernetes' quantity grammar (k8s.io/apimachinery pkg/api/resource/quantity.go), no negative
// amounts and no request above its limit (kubernetes pkg/apis/core/validation ValidateResourceRequirements).

import type { ResourceOptions } from "./options.js";

export class ContainerCheckError extends Error {}

const HOST_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const HOST = `(?:${HOST_COMPONENT}(?:\\.${HOST_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "sha256:[a-f0-9]{64}";
// [host/]component(/component)*[:tag][@digest]; a first part is a host only with a "." or ":" or when
// it is localhost (distribution reference/normalize.go).
const IMAGE_REFERENCE = new RegExp(
  `^(?:(${HOST})/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);

const PATH_COMPONENT_ONLY = new RegExp(`^${PATH_COMPONENT}$`);

const IMAGE_HINT = "REGISTRY/REPOSITORY:TAG or REPOSITORY@sha256:DIGEST, repository in lower case";

/** An image reference both Knative and the container runtime accept; throws naming --image. */
export function checkImage(image: string): string {
  const match = IMAGE_REFERENCE.exec(image);
  const host = match?.[1];
  const repository = match?.[2] ?? "";
  // Without a "." or ":" (or localhost) the first part is not a host but part of the repository.
  const misreadHost = host !== undefined && !/[.:]/.test(host) && host !== "localhost";
  const fullRepository = misreadHost ? `${host}/${repository}` : repository;
  const badComponent = misreadHost && !PATH_COMPONENT_ONLY.test(host);
  if (!match || badComponent || fullRepository.length < 2 || fullRepository.length > 255) {
    throw new ContainerCheckError(`--image "${image}" is not an image reference (${IMAGE_HINT})`);
  }
  return image;
}

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const BINARY_POWER: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_EXPONENT: Record<string, number> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** A quantity's value (approximate: a double), or undefined when it is not Kubernetes quantity syntax. */
export function quantityValue(text: string): number | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign, digits, suffix = ""] = match;
  const magnitude = Number(digits);
  let scale = 1;
  if (suffix in BINARY_POWER) scale = 1024 ** (BINARY_POWER[suffix] as number);
  else if (suffix in DECIMAL_EXPONENT) scale = 10 ** (DECIMAL_EXPONENT[suffix] as number);
  else if (suffix !== "") scale = 10 ** Number(suffix.slice(1));
  return (sign === "-" ? -1 : 1) * magnitude * scale;
}

type Resource = "cpu" | "memory";

function checkedQuantity(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const amount = quantityValue(value);
  if (amount === undefined) {
    throw new ContainerCheckError(
      `${flag} "${value}" is not a Kubernetes quantity (e.g. 100m, 0.5, 128Mi, 1Gi)`,
    );
  }
  if (amount < 0) throw new ContainerCheckError(`${flag} ${value} must not be negative`);
  return amount;
}

/** Every quantity well-formed and not negative, and no request above its limit. */
export function checkResources(resources: ResourceOptions): ResourceOptions {
  for (const resource of ["cpu", "memory"] as Resource[]) {
    const requestFlag = `--${resource}-request`;
    const limitFlag = `--${resource}-limit`;
    const request = checkedQuantity(resources.requests?.[resource], requestFlag);
    const limit = checkedQuantity(resources.limits?.[resource], limitFlag);
    if (request !== undefined && limit !== undefined && request > limit) {
      throw new ContainerCheckError(
        `${requestFlag} ${resources.requests?.[resource]} is above ${limitFlag} ${resources.limits?.[resource]}: Kubernetes refuses a pod whose request exceeds its limit`,
      );
    }
  }
  return resources;
}
