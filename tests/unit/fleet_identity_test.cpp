// fleet_identity_test.cpp: the pod and container of a cgroup path, as the kubelet lays them
// out with the cgroupfs driver (v1) and the systemd driver (v2), and none outside a pod.
#include <catch2/catch.hpp>
#include <string>

#include "catalog/fleet_record.h"
#include "recorder/fleet_identity.h"

using cudashim::recorder::parse_kube_cgroup;

TEST_CASE("fleet identity: the kubelet's cgroup paths") {
  SECTION("cgroup v1, cgroupfs driver: one line per controller") {
    const auto k = parse_kube_cgroup(
        "12:memory:/kubepods/burstable/pod1b4f0a7e-4e1f-4a6b-9d7c-2f7c1d2e3f40/0123456789abcdef\n"
        "11:cpu,cpuacct:/kubepods/burstable/pod1b4f0a7e-4e1f-4a6b-9d7c-2f7c1d2e3f40/0123456789abcdef\n");
    CHECK(k.in_pod);
    CHECK(k.pod_uid == "1b4f0a7e-4e1f-4a6b-9d7c-2f7c1d2e3f40");
    CHECK(k.container_id == "0123456789abcdef");
  }
  SECTION("cgroup v2, systemd driver: underscores in the uid, the runtime's scope") {
    const auto k = parse_kube_cgroup(
        "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1b4f0a7e_4e1f_4a6b_9d7c_2f7c1d2e3f40.slice/"
        "cri-containerd-a1b2c3.scope\n");
    CHECK(k.pod_uid == "1b4f0a7e-4e1f-4a6b-9d7c-2f7c1d2e3f40");
    CHECK(k.container_id == "a1b2c3");
  }
  SECTION("a guaranteed pod's path, ending at the pod") {
    const auto k = parse_kube_cgroup("0::/kubepods/pod42\n");
    CHECK(k.pod_uid == "42");
    CHECK(k.container_id.empty());
  }
  SECTION("outside Kubernetes: a Slurm step, a user session") {
    CHECK_FALSE(parse_kube_cgroup("0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0\n").in_pod);
    CHECK_FALSE(parse_kube_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n").in_pod);
    CHECK_FALSE(parse_kube_cgroup("").in_pod);
  }
}

TEST_CASE("fleet record: the table and the layout agree") {
  CHECK(sizeof(cudashim::FleetRecord) == 3768);  // tests/fleet/hostile_records.py writes records of this size
  for (const auto& m : cudashim::kFleetValues) {
    const std::string name = m.metric;
    CHECK(name.rfind("cudashim_", 0) == 0);
    CHECK((name.size() > 6 && name.substr(name.size() - 6) == "_total") == m.counter);
  }
}
