#!/usr/bin/python3
"""The timing loop of tests/bench/cri-pod-start: one gRPC channel to containerd's CRI plugin,
kubelet's calls for one pod with one container, timed from this client.

Usage: cri-pod-start.py RUNS WARMUP OUT.json HANDLER...   (env: CRI_SOCK, CRI_GEN, D, IMAGE)

Per run and handler (the order rotates run by run):
  start     = RunPodSandbox + CreateContainer + StartContainer, from the first request sent
              to StartContainer's response (containerd answers once the task's Start
              returned and it marked the container running); a ContainerStatus after the
              clock stops checks CONTAINER_RUNNING
  teardown  = StopContainer (grace 30 s; /pause exits on SIGTERM) + RemoveContainer +
              StopPodSandbox + RemovePodSandbox
Phases (run, create, start; stop, remove) are kept too. WARMUP runs per handler first, not
counted. Writes {"ward": {"start": [ms...], ...}, "runc": {...}} to OUT.json.
"""

import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cri"))
import cri  # noqa: E402 (tests/cri/cri.py: api.proto's generated code)

import grpc  # noqa: E402

api = cri.load_api()
D = os.environ["D"]
IMAGE = os.environ["IMAGE"]


class Client:
    def __init__(self, sock):
        self.ch = grpc.insecure_channel("unix://" + sock)
        self.fns = {}
        for svc in ("RuntimeService", "ImageService"):
            s = api.DESCRIPTOR.services_by_name[svc]
            for m in s.methods:
                req = getattr(api, m.input_type.name)
                resp = getattr(api, m.output_type.name)
                self.fns[m.name] = self.ch.unary_unary(
                    "/runtime.v1.%s/%s" % (svc, m.name),
                    request_serializer=req.SerializeToString,
                    response_deserializer=resp.FromString,
                )

    def __getattr__(self, name):
        fn = self.fns[name]
        return lambda req: fn(req, timeout=120)


def pod_config(name):
    """A PodSandboxConfig as kubelet (cgroupfs driver) sends it for a BestEffort pod."""
    uid = str(uuid.uuid4())
    with open(os.path.join(D, "uids"), "a") as f:
        f.write(uid + "\n")
    logs = os.path.join(D, "logs", "default_%s_%s" % (name, uid))
    pod_dir = os.path.join(D, "kubelet", "pods", uid)
    os.makedirs(logs)
    os.makedirs(os.path.join(pod_dir, "containers", "app"))
    with open(os.path.join(pod_dir, "etc-hosts"), "w") as f:
        f.write("127.0.0.1\tlocalhost\n")
    return api.PodSandboxConfig(
        metadata=api.PodSandboxMetadata(name=name, uid=uid, namespace="default", attempt=0),
        hostname=name,
        log_directory=logs,
        dns_config=api.DNSConfig(servers=["10.96.0.10"], searches=["default.svc.cluster.local"], options=["ndots:5"]),
        labels={
            "io.kubernetes.pod.name": name,
            "io.kubernetes.pod.namespace": "default",
            "io.kubernetes.pod.uid": uid,
        },
        annotations={"kubernetes.io/config.source": "api", "kubernetes.io/config.seen": "2026-11-27T00:00:00Z"},
        linux=api.LinuxPodSandboxConfig(
            cgroup_parent="/kubepods/besteffort/pod" + uid,
            security_context=api.LinuxSandboxSecurityContext(
                namespace_options=api.NamespaceOption(network=api.POD, pid=api.CONTAINER, ipc=api.POD),
                seccomp=api.SecurityProfile(profile_type=api.SecurityProfile.RuntimeDefault),
            ),
        ),
    ), pod_dir


def container_config(pod_dir):
    """A ContainerConfig as kubelet sends it: image by name, log path, env, /etc/hosts and
    /dev/termination-log from the pod's kubelet dir, BestEffort resources, RuntimeDefault."""
    term = os.path.join(pod_dir, "containers", "app", uuid.uuid4().hex[:8])
    open(term, "w").close()
    return api.ContainerConfig(
        metadata=api.ContainerMetadata(name="app", attempt=0),
        image=api.ImageSpec(image=IMAGE),
        command=["/pause"],
        envs=[api.KeyValue(key="KUBERNETES_SERVICE_HOST", value="10.96.0.1"),
              api.KeyValue(key="KUBERNETES_SERVICE_PORT", value="443")],
        mounts=[
            api.Mount(container_path="/etc/hosts", host_path=os.path.join(pod_dir, "etc-hosts")),
            api.Mount(container_path="/dev/termination-log", host_path=term),
        ],
        log_path="app/0.log",
        labels={"io.kubernetes.container.name": "app", "io.kubernetes.pod.namespace": "default"},
        annotations={"io.kubernetes.container.restartCount": "0",
                     "io.kubernetes.container.terminationMessagePath": "/dev/termination-log"},
        linux=api.LinuxContainerConfig(
            resources=api.LinuxContainerResources(cpu_period=100000, cpu_shares=2, oom_score_adj=1000),
            security_context=api.LinuxContainerSecurityContext(
                namespace_options=api.NamespaceOption(network=api.POD, pid=api.CONTAINER, ipc=api.POD),
                seccomp=api.SecurityProfile(profile_type=api.SecurityProfile.RuntimeDefault),
                masked_paths=["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                              "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
                              "/proc/scsi", "/sys/firmware"],
                readonly_paths=["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq",
                                "/proc/sys", "/proc/sysrq-trigger"],
            ),
        ),
    )


def one(c, handler, name):
    cfg, pod_dir = pod_config(name)
    ccfg = container_config(pod_dir)
    t0 = time.monotonic()
    sid = c.RunPodSandbox(api.RunPodSandboxRequest(config=cfg, runtime_handler=handler)).pod_sandbox_id
    t1 = time.monotonic()
    cid = c.CreateContainer(api.CreateContainerRequest(pod_sandbox_id=sid, config=ccfg, sandbox_config=cfg)).container_id
    t2 = time.monotonic()
    c.StartContainer(api.StartContainerRequest(container_id=cid))
    t3 = time.monotonic()
    with open(os.path.join(D, "ids"), "a") as f:
        f.write("%s\n%s\n" % (sid, cid))
    st = c.ContainerStatus(api.ContainerStatusRequest(container_id=cid)).status
    if st.state != api.CONTAINER_RUNNING:
        sys.exit("cri-pod-start: %s container %s is %s after StartContainer" % (handler, cid, st.state))
    t4 = time.monotonic()
    c.StopContainer(api.StopContainerRequest(container_id=cid, timeout=30))
    c.RemoveContainer(api.RemoveContainerRequest(container_id=cid))
    t5 = time.monotonic()
    c.StopPodSandbox(api.StopPodSandboxRequest(pod_sandbox_id=sid))
    c.RemovePodSandbox(api.RemovePodSandboxRequest(pod_sandbox_id=sid))
    t6 = time.monotonic()
    ms = lambda a, b: round((b - a) * 1000, 3)  # noqa: E731
    return {"start": ms(t0, t3), "run": ms(t0, t1), "create": ms(t1, t2), "startc": ms(t2, t3),
            "teardown": ms(t4, t6), "ctr_down": ms(t4, t5), "pod_down": ms(t5, t6)}


def main():
    runs, warm, out, handlers = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    c = Client(os.environ["CRI_SOCK"])
    res = {h: {} for h in handlers}
    for i in range(warm):
        for h in handlers:
            one(c, h, "warm-%s-%d" % (h, i))
    for i in range(runs):
        k = i % len(handlers)
        for h in handlers[k:] + handlers[:k]:
            r = one(c, h, "bench-%s-%d" % (h, i))
            for k, v in r.items():
                res[h].setdefault(k, []).append(v)
        sys.stderr.write("\rrun %d/%d" % (i + 1, runs))
    sys.stderr.write("\n")
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    try:
        main()
    except grpc.RpcError as e:
        sys.exit("cri-pod-start: %s: %s" % (e.code().name, e.details()))
