// Who sends pod writes and deletes: the usernames the API server puts in an AdmissionReview's userInfo for
// the cluster's own actors. One home, so the function's rules, the load tester, `replay` and the tests agree.

// kube-controller-manager's controllers with --use-service-account-credentials (kubeadm, kind): each runs as
// its own service account in kube-system (kubernetes/kubernetes cmd/kube-controller-manager/app/core.go;
// https://kubernetes.io/docs/reference/access-authn-authz/rbac/#controller-roles).
export const GARBAGE_COLLECTOR_USER = "system:serviceaccount:kube-system:generic-garbage-collector";
export const NAMESPACE_CONTROLLER_USER = "system:serviceaccount:kube-system:namespace-controller";
/** The taint-eviction controller reuses the node-controller credentials. */
export const NODE_CONTROLLER_USER = "system:serviceaccount:kube-system:node-controller";
export const POD_GC_USER = "system:serviceaccount:kube-system:pod-garbage-collector";
// Without service-account credentials every controller is this one identity. Its deletes of simulation
// pods are the garbage collector's and the namespace controller's (teardown); its other pod deletes, by
// the taint manager and podgc, always carry DisruptionTarget, and that condition is checked first for it.
export const CONTROLLER_MANAGER_USER = "system:kube-controller-manager";

/**
 * The controllers that tear a simulation down. Their first-phase pod deletes are never interruptions: the
 * DELETE webhook's match conditions keep them from reschedule-delete, which checks them again.
 */
export const TEARDOWN_CONTROLLER_USERS: readonly string[] = [
  GARBAGE_COLLECTOR_USER,
  NAMESPACE_CONTROLLER_USER,
];

/** KWOK's controller, which plays the kubelet on virtual nodes. */
export const KWOK_USER = "system:serviceaccount:kube-system:kwok-controller";

/** The service account SimKube's controller runs the driver job as (acrlabs/simkube k8s/kustomize/sim/sk-ctrl.yml). */
export const SIMKUBE_DRIVER_USER = "system:serviceaccount:simkube:sk-ctrl-sa";
export const DEFAULT_DRIVER_USERS = [SIMKUBE_DRIVER_USER];

/** The admin user of a kubeadm (and kind) cluster's kubeconfig. */
export const ADMIN_USER = "kubernetes-admin";
