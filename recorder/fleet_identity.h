// fleet_identity.h: who a process is for the fleet's dashboards (catalog/fleet_record.h): the
// Kubernetes pod and container of its cgroup, the Slurm job of its environment. Read by the
// process itself when it first publishes its fleet record (shim/fleet_publish.cpp): an
// exporter may not be allowed to read another user's /proc/<pid>/environ.
#pragma once
#include <string>
#include <string_view>

namespace cudashim::recorder {

// What a /proc/<pid>/cgroup text says of the kubelet's layout (cgroup v1
// ".../kubepods/burstable/pod<uid>/<container id>" and the systemd driver's
// ".../kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope").
struct KubeCgroup {
  bool in_pod = false;       // a kubepods path was found
  std::string pod_uid;       // "1b4f0a7e-...", "" when not found
  std::string container_id;  // the runtime's id of the container, "" when the path ends at the pod
};
KubeCgroup parse_kube_cgroup(std::string_view cgroup_text);

struct FleetIdentity {
  std::string slurm_job_id, slurm_step;  // SLURM_JOB_ID, SLURM_STEP_ID
  std::string pod, pod_namespace, container, pod_uid;
};
// Reads the identity of this process: the environment (POD_NAME, POD_NAMESPACE and
// CONTAINER_NAME as the Downward API conventionally sets them; HOSTNAME, which the kubelet
// sets to the pod's name) and /proc/self/cgroup, and the service account's namespace file.
// `getenv` reads a variable (secure_getenv in the shim).
FleetIdentity read_fleet_identity(const char* (*getenv)(const char*));

}  // namespace cudashim::recorder
