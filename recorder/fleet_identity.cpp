// fleet_identity.cpp: the process's pod, container and Slurm job (recorder/fleet_identity.h).
#include "recorder/fleet_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace cudashim::recorder {
namespace {

// The first `max` bytes of `path`, "" when it cannot be read.
std::string read_small(const char* path, size_t max) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string s(max, '\0');
  size_t n = 0;
  while (n < max) {
    const ssize_t r = read(fd, s.data() + n, max - n);
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  close(fd);
  s.resize(n);
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope" or a bare id: the id.
std::string container_of(std::string_view seg) {
  if (seg.size() > 6 && seg.substr(seg.size() - 6) == ".scope") seg.remove_suffix(6);
  for (std::string_view p : {"cri-containerd-", "docker-", "crio-", "containerd-"})
    if (seg.substr(0, p.size()) == p) {
      seg.remove_prefix(p.size());
      break;
    }
  return std::string(seg);
}

}  // namespace

KubeCgroup parse_kube_cgroup(std::string_view text) {
  KubeCgroup k;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const size_t at = line.find("kubepods");
    if (at == std::string_view::npos) continue;
    k.in_pod = true;
    std::string_view path = line.substr(at);
    std::string pod_seg_last;
    bool after_pod = false;
    while (!path.empty()) {
      const size_t slash = path.find('/');
      std::string_view seg = path.substr(0, slash);
      path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
      if (seg.empty()) continue;
      const size_t pod = seg.rfind("pod");
      if (!after_pod && pod != std::string_view::npos && (pod == 0 || seg[pod - 1] == '-')) {
        std::string_view uid = seg.substr(pod + 3);
        if (uid.size() > 6 && uid.substr(uid.size() - 6) == ".slice") uid.remove_suffix(6);
        k.pod_uid.assign(uid);
        std::replace(k.pod_uid.begin(), k.pod_uid.end(), '_', '-');
        after_pod = true;
      } else if (after_pod) {
        k.container_id = container_of(seg);
      }
    }
    if (!k.pod_uid.empty()) return k;  // the first line with a pod says it (v1 repeats it per controller)
  }
  return k;
}

FleetIdentity read_fleet_identity(const char* (*getenv)(const char*)) {
  FleetIdentity id;
  auto env = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? std::string(v) : std::string();
  };
  id.slurm_job_id = env("SLURM_JOB_ID");
  id.slurm_step = env("SLURM_STEP_ID");
  const KubeCgroup k = parse_kube_cgroup(read_small("/proc/self/cgroup", 16384));
  id.pod = env("POD_NAME");
  id.pod_namespace = env("POD_NAMESPACE");
  id.container = env("CONTAINER_NAME");
  if (k.in_pod) {
    if (id.pod.empty()) id.pod = env("HOSTNAME");
    if (id.pod_namespace.empty())
      id.pod_namespace = trim(read_small("/var/run/secrets/kubernetes.io/serviceaccount/namespace", 256));
    if (id.container.empty()) id.container = k.container_id;
    id.pod_uid = k.pod_uid;
  }
  return id;
}

}  // namespace cudashim::recorder
