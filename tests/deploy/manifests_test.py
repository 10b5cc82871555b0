#!/usr/bin/env python3
"""Checks the Kubernetes manifests in deploy/k8s/ without a cluster.

  - every file parses as YAML, every document has apiVersion, kind and a name;
  - tfjob.yaml: a kubeflow.org/v1 TFJob with Chief (1), PS and Worker
    replicas, containers named "tensorflow" running chief / ps / worker on
    port 2222 ("tfjob-port"), one image, the claims of pvc.yaml mounted where
    the flags point (checkpoints on chief and ps, MNIST on chief and workers);
  - plain.yaml: a headless Service, one Indexed Job per role whose pods'
    subdomain is that Service, counts equal to NUM_PS / NUM_WORKERS of the
    pstrain-cluster ConfigMap, the same image and claims;
  - the pstrain-flags ConfigMap is the same in both recipes;
  - plain.yaml's entrypoint.sh, run here by /bin/sh with the HOSTNAME an
    Indexed Job gives a pod (pstrain-worker-1, ...) and a stand-in for the
    executable, exports a TF_CONFIG that parses as JSON with the expected
    cluster and the index from the host name;
  - the real worker (--bin_dir) accepts that TF_CONFIG, the one the
    training-operator writes (with "environment": "cloud"), and the flag
    file (it gets as far as reading MNIST), and rejects a task index out of
    range and a misspelt flag (exit 2): these checks can fail.

Usage: manifests_test.py [--bin_dir DIR] [--k8s_dir DIR]
Exit 0: passed; 1: failed (each problem named); 77: skipped (no PyYAML).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
K8S = os.path.join(ROOT, "deploy", "k8s")
ROLES = ("ps", "chief", "worker")
PORT = 2222
SKIP = 77

problems = []


def expect(condition, message):
    if not condition:
        problems.append(message)
    return condition


def load(k8s_dir, name):
    import yaml  # pylint: disable=import-outside-toplevel
    with open(os.path.join(k8s_dir, name), encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    for i, d in enumerate(docs):
        expect(isinstance(d, dict) and d.get("apiVersion") and d.get("kind")
               and d.get("metadata", {}).get("name"),
               f"{name}: document {i} lacks apiVersion, kind or metadata.name")
    return docs


def find(docs, kind, name=None):
    found = [d for d in docs if d.get("kind") == kind
             and (name is None or d["metadata"]["name"] == name)]
    return found


def flag_value(flags_text, name):
    for line in flags_text.splitlines():
        if line.startswith(f"--{name}="):
            return line.split("=", 1)[1]
    return None


def claims_of(pod_spec):
    """{mountPath: claimName} of a pod spec's PVC mounts (first container)."""
    volumes = {v["name"]: v["persistentVolumeClaim"]["claimName"]
               for v in pod_spec.get("volumes", []) if "persistentVolumeClaim" in v}
    mounts = pod_spec["containers"][0].get("volumeMounts", [])
    return {m["mountPath"]: volumes[m["name"]] for m in mounts if m["name"] in volumes}


def check_storage(where, role, pod_spec, flags_text, pvc_names):
    claims = claims_of(pod_spec)
    for claim in claims.values():
        expect(claim in pvc_names, f"{where}: {role} mounts claim {claim}, not in pvc.yaml")
    ckpt = flag_value(flags_text, "checkpoint_dir")
    data = flag_value(flags_text, "data_dir")
    mounted = lambda path: any(path == m or path.startswith(m.rstrip("/") + "/") for m in claims)
    if role in ("ps", "chief"):
        expect(mounted(ckpt), f"{where}: {role} does not mount a claim at --checkpoint_dir={ckpt}")
    if role in ("chief", "worker"):
        expect(mounted(data), f"{where}: {role} does not mount a claim at --data_dir={data}")
    if role == "chief":
        run_dir = flag_value(flags_text, "run_dir")
        expect(run_dir is None or mounted(run_dir),
               f"{where}: chief does not mount a claim at --run_dir={run_dir}")


def check_tfjob(docs, flags_text, pvc_names):
    jobs = find(docs, "TFJob")
    if not expect(len(jobs) == 1, "tfjob.yaml: expected one TFJob"):
        return
    job = jobs[0]
    expect(job["apiVersion"] == "kubeflow.org/v1", "tfjob.yaml: apiVersion is not kubeflow.org/v1")
    specs = job["spec"]["tfReplicaSpecs"]
    expect(set(specs) == {"Chief", "PS", "Worker"},
           f"tfjob.yaml: replica types {sorted(specs)}, expected Chief, PS, Worker")
    expect(specs.get("Chief", {}).get("replicas") == 1, "tfjob.yaml: Chief replicas is not 1")
    images = set()
    for key, role in (("Chief", "chief"), ("PS", "ps"), ("Worker", "worker")):
        if key not in specs:
            continue
        pod = specs[key]["template"]["spec"]
        c = pod["containers"][0]
        images.add(c["image"])
        expect(c["name"] == "tensorflow",
               f"tfjob.yaml: {key} container is '{c['name']}'; the operator sets TF_CONFIG "
               f"only in the one named 'tensorflow'")
        expect(c.get("command") == [role], f"tfjob.yaml: {key} command is not [{role}]")
        expect({"name": "tfjob-port", "containerPort": PORT} in c.get("ports", []),
               f"tfjob.yaml: {key} has no port {PORT} named tfjob-port")
        expect(pod.get("securityContext", {}).get("runAsUser") == 1000,
               f"tfjob.yaml: {key} does not run as uid 1000 (the image's user)")
        check_storage("tfjob.yaml", role, pod, flags_text, pvc_names)
    expect(len(images) == 1, f"tfjob.yaml: the replicas use different images {sorted(images)}")


def check_plain(docs, flags_text, pvc_names):
    services = find(docs, "Service")
    if not expect(len(services) == 1, "plain.yaml: expected one Service"):
        return
    svc = services[0]
    expect(svc["spec"].get("clusterIP") == "None", "plain.yaml: the Service is not headless")
    expect(svc["spec"].get("publishNotReadyAddresses") is True,
           "plain.yaml: the Service does not publish not-ready addresses")
    cluster = find(docs, "ConfigMap", "pstrain-cluster")
    if not expect(len(cluster) == 1, "plain.yaml: no pstrain-cluster ConfigMap"):
        return
    env = cluster[0]["data"]
    expect(env.get("PSTRAIN_SERVICE") == svc["metadata"]["name"],
           "plain.yaml: PSTRAIN_SERVICE is not the Service's name")
    expect(env.get("PSTRAIN_PORT") == str(PORT), f"plain.yaml: PSTRAIN_PORT is not {PORT}")
    counts = {"ps": int(env["NUM_PS"]), "worker": int(env["NUM_WORKERS"]), "chief": 1}
    images = set()
    for role in ROLES:
        name = f"{env['PSTRAIN_JOB']}-{role}"
        jobs = find(docs, "Job", name)
        if not expect(len(jobs) == 1, f"plain.yaml: no Job {name}"):
            continue
        spec = jobs[0]["spec"]
        expect(spec.get("completionMode") == "Indexed",
               f"plain.yaml: Job {name} is not Indexed (its pods' host names carry no index)")
        expect(spec.get("completions") == counts[role] and spec.get("parallelism") == counts[role],
               f"plain.yaml: Job {name} runs {spec.get('completions')}/{spec.get('parallelism')} "
               f"pods, pstrain-cluster says {counts[role]}")
        pod = spec["template"]["spec"]
        expect(pod.get("subdomain") == svc["metadata"]["name"],
               f"plain.yaml: Job {name}'s pods are not in the Service's subdomain")
        labels = spec["template"]["metadata"]["labels"]
        expect(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
               f"plain.yaml: the Service does not select Job {name}'s pods")
        c = pod["containers"][0]
        images.add(c["image"])
        expect(c["command"][-1] == role and "entrypoint.sh" in c["command"][-2],
               f"plain.yaml: Job {name} does not run entrypoint.sh {role}")
        expect(any(e.get("configMapRef", {}).get("name") == "pstrain-cluster"
                   for e in c.get("envFrom", [])),
               f"plain.yaml: Job {name} does not read pstrain-cluster")
        expect(any(e["name"] == "POD_NAMESPACE" for e in c.get("env", [])),
               f"plain.yaml: Job {name} does not set POD_NAMESPACE")
        check_storage("plain.yaml", role, pod, flags_text, pvc_names)
    expect(len(images) == 1, f"plain.yaml: the Jobs use different images {sorted(images)}")
    return env


def run_entrypoint(script, role, hostname, env, path_dir, args, namespace="ns"):
    run_env = {"PATH": f"{path_dir}:/usr/bin:/bin", "HOSTNAME": hostname,
               "POD_NAMESPACE": namespace, **env}
    return subprocess.run(["/bin/sh", script, role, *args], env=run_env, check=False,
                          capture_output=True, text=True, timeout=60)


def check_entrypoint(docs, env, flags_text, bin_dir):
    script_text = find(docs, "ConfigMap", "pstrain-entrypoint")[0]["data"]["entrypoint.sh"]
    job, svc = env["PSTRAIN_JOB"], env["PSTRAIN_SERVICE"]
    hosts = lambda role, n: [f"{job}-{role}-{i}.{svc}.ns.svc:{PORT}" for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "entrypoint.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write(script_text)
        # Stand-ins for the executables: write TF_CONFIG and the arguments.
        fake = os.path.join(tmp, "fake")
        os.mkdir(fake)
        for role in ROLES:
            path = os.path.join(fake, role)
            with open(path, "w", encoding="utf-8") as f:
                f.write(f'#!/bin/sh\nprintf "%s\\n" "$TF_CONFIG" > "{tmp}/{role}.out"\n'
                        f'printf "%s\\n" "$@" >> "{tmp}/{role}.out"\n')
            os.chmod(path, 0o755)
        for role, index in (("worker", 1), ("ps", 1), ("chief", 0), ("worker", 0)):
            hostname = f"{job}-{role}-{index}"
            out = run_entrypoint(script, role, hostname, env, fake, ["--flagfile=F", "--x=1"])
            if not expect(out.returncode == 0,
                          f"entrypoint.sh {role} with HOSTNAME={hostname}: exit "
                          f"{out.returncode}: {out.stderr.strip()}"):
                continue
            with open(os.path.join(tmp, f"{role}.out"), encoding="utf-8") as f:
                lines = f.read().splitlines()
            try:
                tf = json.loads(lines[0])
            except ValueError as e:
                expect(False, f"entrypoint.sh HOSTNAME={hostname}: TF_CONFIG is not JSON ({e}): "
                              f"{lines[0]}")
                continue
            expected = {"cluster": {"chief": hosts("chief", 1),
                                    "ps": hosts("ps", int(env["NUM_PS"])),
                                    "worker": hosts("worker", int(env["NUM_WORKERS"]))},
                        "task": {"type": role, "index": index}}
            expect(tf == expected, f"entrypoint.sh HOSTNAME={hostname}: TF_CONFIG {tf}, "
                                   f"expected {expected}")
            expect(lines[1:] == ["--flagfile=F", "--x=1"],
                   f"entrypoint.sh HOSTNAME={hostname}: arguments {lines[1:]} not passed on")
            if role == "worker" and index == 1:
                print(f"OK: HOSTNAME={hostname} -> TF_CONFIG={lines[0]}")
        out = run_entrypoint(script, "worker", "pstrain-worker", env, fake, [])
        expect(out.returncode == 2 and "no task index" in out.stderr,
               f"entrypoint.sh with HOSTNAME=pstrain-worker (no index): exit {out.returncode}, "
               f"expected 2: {out.stderr.strip()}")

        if bin_dir is None:
            print("note: no --bin_dir: the real executables are not run")
            return
        before = len(problems)
        flagfile = os.path.join(tmp, "train.flags")
        with open(flagfile, "w", encoding="utf-8") as f:
            f.write(flags_text)
        no_mnist = os.path.join(tmp, "no-mnist")
        # The real worker, TF_CONFIG from entrypoint.sh, the manifests' flag
        # file: it parses all of it and stops at the (absent) MNIST files.
        out = run_entrypoint(script, "worker", f"{job}-worker-1", env, bin_dir,
                             [f"--flagfile={flagfile}", f"--data_dir={no_mnist}"])
        expect(out.returncode == 1 and "MNIST file not found" in out.stderr,
               f"real worker with entrypoint.sh's TF_CONFIG and train.flags: exit "
               f"{out.returncode}, expected 1 at the MNIST files: {out.stderr.strip()[-600:]}")
        # ... and reads the index: one past the workers is refused.
        n = int(env["NUM_WORKERS"])
        out = run_entrypoint(script, "worker", f"{job}-worker-{n}", env, bin_dir,
                             [f"--flagfile={flagfile}", f"--data_dir={no_mnist}"])
        expect(out.returncode == 2 and f"--task_index={n} is out of range" in out.stderr,
               f"real worker with HOSTNAME={job}-worker-{n}: exit {out.returncode}, expected 2 "
               f"(index out of range): {out.stderr.strip()[-600:]}")
        # A misspelt flag in the flag file is refused (so the check above can fail).
        bad = os.path.join(tmp, "bad.flags")
        with open(bad, "w", encoding="utf-8") as f:
            f.write(flags_text.replace("--train_steps=", "--train_stepz="))
        out = run_entrypoint(script, "worker", f"{job}-worker-1", env, bin_dir,
                             [f"--flagfile={bad}", f"--data_dir={no_mnist}"])
        expect(out.returncode == 2 and "train_stepz" in out.stderr,
               f"real worker with a misspelt flag in the flag file: exit {out.returncode}, "
               f"expected 2: {out.stderr.strip()[-600:]}")
        # The TF_CONFIG the training-operator writes for tfjob.yaml.
        operator = {"cluster": {"chief": ["pstrain-chief-0.ns.svc:2222"],
                                "ps": ["pstrain-ps-0.ns.svc:2222", "pstrain-ps-1.ns.svc:2222"],
                                "worker": ["pstrain-worker-0.ns.svc:2222",
                                           "pstrain-worker-1.ns.svc:2222"]},
                    "task": {"type": "worker", "index": 1}, "environment": "cloud"}
        for index, code, text in ((1, 1, "MNIST file not found"), (2, 2, "--task_index=2 is out of range")):
            operator["task"]["index"] = index
            out = subprocess.run([os.path.join(bin_dir, "worker"), f"--flagfile={flagfile}",
                                  f"--data_dir={no_mnist}"],
                                 env={"PATH": "/usr/bin:/bin", "TF_CONFIG": json.dumps(operator)},
                                 check=False, capture_output=True, text=True, timeout=60)
            expect(out.returncode == code and text in out.stderr,
                   f"real worker with the operator's TF_CONFIG (index {index}): exit "
                   f"{out.returncode}, expected {code} ({text}): {out.stderr.strip()[-600:]}")
        if len(problems) == before:
            print("OK: the real worker accepts both TF_CONFIGs and train.flags, refuses an index "
                  "out of range and a misspelt flag")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin_dir", help="folder with the built ps, worker, chief")
    parser.add_argument("--k8s_dir", default=K8S, help="the manifests (default: deploy/k8s)")
    args = parser.parse_args()
    try:
        import yaml  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        print("SKIPPED: PyYAML is not installed (Debian: python3-yaml)")
        return SKIP
    if args.bin_dir and not os.access(os.path.join(args.bin_dir, "worker"), os.X_OK):
        print(f"note: {args.bin_dir}/worker is not built: the real executables are not run")
        args.bin_dir = None

    files = sorted(f for f in os.listdir(args.k8s_dir) if f.endswith(".yaml"))
    docs = {f: load(args.k8s_dir, f) for f in files}
    print(f"parsed: {', '.join(f'{f} ({len(d)} documents)' for f, d in docs.items())}")
    for needed in ("pvc.yaml", "tfjob.yaml", "plain.yaml"):
        if not expect(needed in docs, f"deploy/k8s/{needed} is missing"):
            break
    else:
        pvcs = find(docs["pvc.yaml"], "PersistentVolumeClaim")
        for pvc in pvcs:
            expect("ReadWriteMany" in pvc["spec"]["accessModes"],
                   f"pvc.yaml: {pvc['metadata']['name']} is not ReadWriteMany "
                   f"(pods on several nodes share it)")
        pvc_names = {p["metadata"]["name"] for p in pvcs}
        flag_maps = [find(docs[f], "ConfigMap", "pstrain-flags") for f in ("tfjob.yaml", "plain.yaml")]
        if expect(all(len(m) == 1 for m in flag_maps),
                  "tfjob.yaml and plain.yaml must each hold the pstrain-flags ConfigMap"):
            expect(flag_maps[0][0] == flag_maps[1][0],
                   "the pstrain-flags ConfigMap differs between tfjob.yaml and plain.yaml")
            flags_text = flag_maps[1][0]["data"]["train.flags"]
            check_tfjob(docs["tfjob.yaml"], flags_text, pvc_names)
            env = check_plain(docs["plain.yaml"], flags_text, pvc_names)
            if env:
                check_entrypoint(docs["plain.yaml"], env, flags_text, args.bin_dir)

    if problems:
        print("FAILED:")
        for p in problems:
            print("  " + p)
        return 1
    print("OK: deploy/k8s manifests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
