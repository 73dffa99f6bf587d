"""The acceptance reporter: judges a node's recorded check outputs and writes its verdict to the node.

This module runs on the node as it is (the Python standard library only: it is shipped as text in the
acceptance ConfigMap, render/acceptance.py). The check containers before it record each check's output and
exit code under the results directory; the reporter judges them, sets the node's acceptance condition and
labels, and the node readiness controller lifts the startup taint once the condition is True.

Verdicts, as docs/acceptance.md states them:
- dcgm: `dcgmi diag -r <level> -j`; any test result `Fail` fails, `Warn` passes and is reported.
- nccl: `all_reduce_perf` within the node; the bus bandwidth at the largest size must reach the floor, and
  no result may be wrong or out of bounds.
- efa: `fi_info -p efa -t FI_EP_RDM` and the `/dev/infiniband` listing: one RDM domain and one uverbs device
  per EFA interface of the instance type; then `fi_pingpong` between the node's first and last EFA domains must
  complete every exchange (#ack equal to #sent) at or above the floor's MB/s.
- imex: `nvidia-smi -q`: every GPU's NVLink fabric registered (`State: Completed`, `Status: Success`), all in
  one clique of one cluster: what the IMEX daemons of a ComputeDomain need.
- health (the passive re-check of an idle accepted node): `dcgmi health -c`'s "Overall Health": Healthy sets
  the node's GpuHealthPassive condition True, Warning True with the report as its message, Failure (or no
  report) False. A node running work is not re-checked: its condition stays as it was.
- A node whose condition is already False passes again only on a clean run at the full level.
- A failed node is replaced while few enough of its pool's nodes failed (`replacement`): on Karpenter pools
  the reporter deletes the node's NodeClaim and Karpenter launches another; on managed node groups it terminates
  the instance in its Auto Scaling group without decrementing the desired capacity (EKS Pod Identity
  credentials, a SigV4-signed Auto Scaling query), and the group launches another. Past the pool's limit a failed node
  stays, tainted, and its condition says why: a fault common to the pool (a bad AMI, driver or image) must
  not drain it.
- A node without the startup taint, or one already running work (its pool was gated after it registered, and
  the node group's new taint reached it in place), is labelled `unchecked` and no check runs there; a tainted
  one gets its condition True so the taint goes and its work is not starved.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import ssl
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

CONDITION = "GpuAcceptance"
HEALTH_CONDITION = "GpuHealthPassive"
RUN = "run"  # the re-check's request file: the DCGM container reads the health report while it exists
STARTUP_TAINT = "readiness.k8s.io/gpu-acceptance"
SKIP = "skip"  # written by the precheck on a node that registered without the startup taint
LABEL = "gpu-platform.io/acceptance"
CHECK_LABEL = "gpu-platform.io/acceptance-check"
POOL_LABEL = "gpu-platform.io/pool"
NODECLAIM_API = "/apis/karpenter.sh/v1/nodeclaims"
REGION_LABEL = "topology.kubernetes.io/region"
AUTOSCALING_VERSION = "2011-01-01"  # the Auto Scaling query API's version
FORM = "application/x-www-form-urlencoded; charset=utf-8"
FULL_LEVEL = 3
MESSAGE_LIMIT = 1000  # characters of the condition's message


@dataclass(frozen=True)
class Verdict:
    passed: bool
    summary: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    status: str  # the condition's status: True or False
    reason: str
    message: str
    labels: dict[str, Optional[str]] = field(default_factory=dict)  # None removes the label


# --- DCGM diagnostics ---

def _tests(report: Any) -> list[dict[str, Any]]:
    """Every test of a `dcgmi diag -j` report, whatever the top-level key of the DCGM release names it."""
    if not isinstance(report, dict):
        return []
    out: list[dict[str, Any]] = []
    for value in report.values():
        if isinstance(value, dict) and isinstance(value.get("test_categories"), list):
            for category in value["test_categories"]:
                out += [t for t in category.get("tests", []) if isinstance(t, dict)]
    return out


def _messages(result: dict[str, Any]) -> list[str]:
    notes = result.get("warnings") or []
    return [str(n.get("message") or n.get("warning") or "") for n in notes if isinstance(n, dict)]


def judge_dcgm(text: str) -> Verdict:
    try:
        tests = _tests(json.loads(text))
    except ValueError:
        return Verdict(False, "dcgmi diag printed no JSON report")
    if not tests:
        return Verdict(False, "dcgmi diag reported no tests")
    failed, warned = [], []
    for test in tests:
        for result in test.get("results") or []:
            where = f"{test.get('name')}" + (f" GPU {result['entity_id']}" if "entity_id" in result else "")
            status = str(result.get("status", "")).lower()
            detail = "; ".join(m for m in _messages(result) if m)
            if status == "fail":
                failed.append(f"{where}: {detail or 'failed'}")
            elif status == "warn":
                warned.append(f"{where}: {detail or 'warning'}")
    if failed:
        return Verdict(False, "DCGM failed " + " | ".join(failed), tuple(warned))
    return Verdict(True, f"DCGM passed {len(tests)} tests", tuple(warned))


# --- NCCL all-reduce within the node ---

_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+\S+\s+\S+\s+-?\d+\s+(.+)$")


def judge_nccl(text: str, floor_gbps: float) -> Verdict:
    rows = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            cols = m.group(3).split()  # time algbw busbw #wrong, out of place then in place
            if len(cols) >= 8:
                rows.append((int(m.group(1)), max(float(cols[2]), float(cols[6])), int(cols[3]) + int(cols[7])))
    if not rows:
        return Verdict(False, "all_reduce_perf printed no results")
    wrong = sum(r[2] for r in rows)
    bounds = re.search(r"Out of bounds values\s*:\s*(\d+)", text)
    size, busbw, _ = max(rows)
    if wrong or (bounds and int(bounds.group(1))):
        return Verdict(False, f"NCCL all-reduce returned wrong results ({wrong} wrong values)")
    if busbw < floor_gbps:
        return Verdict(False, f"NCCL all-reduce bus bandwidth {busbw:g} GB/s at {size} bytes is below the "
                              f"floor of {floor_gbps:g} GB/s")
    return Verdict(True, f"NCCL all-reduce bus bandwidth {busbw:g} GB/s at {size} bytes (floor {floor_gbps:g})")


# --- EFA ---

# fi_pingpong's rows: bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec (sizes and counts as 1m, 10k)
_PINGPONG = re.compile(r"^\s*(\d+[kmg]?)\s+(\d+[kmg]?)\s+=?(\d+[kmg]?)\s+\S+\s+[\d.]+s\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s*$",
                       re.MULTILINE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _size(text: str) -> int:
    return int(text.rstrip("kmg")) * _UNITS[text[-1] if text[-1] in "kmg" else ""]


def judge_efa(text: str, interfaces: int, floor_mbps: float) -> Verdict:
    domains = set(re.findall(r"^\s*domain:\s*(\S+-rdm)\s*$", text, re.MULTILINE))
    uverbs = set(re.findall(r"\buverbs\d+\b", text))
    devices = f"EFA shows {len(domains)} RDM domains and {len(uverbs)} uverbs devices"
    if len(domains) < interfaces or len(uverbs) < interfaces:
        return Verdict(False, f"{devices}; the instance type has {interfaces} EFA interfaces")
    return _transfer(text, floor_mbps, devices)


def _transfer(text: str, floor_mbps: float, devices: str) -> Verdict:
    rows = [(_size(m[0]), _size(m[1]), _size(m[2]), float(m[3])) for m in _PINGPONG.findall(text)]
    if not rows:
        return Verdict(False, f"{devices}, but the transfer between its interfaces printed no results")
    size, sent, acked, mbps = max(rows)
    if acked != sent:
        return Verdict(False, f"{devices}; the transfer acknowledged {acked} of {sent} messages")
    if mbps < floor_mbps:
        return Verdict(False, f"{devices}; the transfer between its interfaces ran at {mbps:g} MB/s at {size} bytes, "
                              f"below the floor of {floor_mbps:g} MB/s")
    return Verdict(True, f"{devices}; transfer {mbps:g} MB/s at {size} bytes (floor {floor_mbps:g})")


# --- the passive health re-check ---

_OVERALL = re.compile(r"Overall Health\s*[:|]?\s*(?:\|\s*)?(\w+)")  # "Overall Health | Warning" or "...: Healthy"


def judge_health(text: str) -> Outcome:
    """The GpuHealthPassive condition from `dcgmi health -c`'s report (its incidents, trimmed, as the message)."""
    found = _OVERALL.search(text)
    if not found:
        return Outcome("False", "NoReport", _message("dcgmi health printed no report: " + text.strip()[-300:], []))
    overall = found.group(1).capitalize()
    detail = " ".join(line.strip(" |+=-") for line in text[found.end():].splitlines() if line.strip(" |+=-"))
    if overall == "Healthy":
        return Outcome("True", "Healthy", "DCGM health watches report no incident")
    if overall == "Warning":
        return Outcome("True", "Warning", _message(f"DCGM health warning: {detail}", []))
    return Outcome("False", overall, _message(f"DCGM health {overall.lower()}: {detail}", []))


# --- the NVLink fabric an IMEX domain needs ---

def judge_imex(text: str) -> Verdict:
    blocks = re.findall(r"^\s*Fabric\s*\n((?:\s{8,}.*\n?)+)", text, re.MULTILINE)
    if not blocks:
        return Verdict(False, "nvidia-smi shows no NVLink fabric")
    cliques, bad = set(), []
    for i, block in enumerate(blocks):
        fields = dict(re.findall(r"^\s*(\w[\w ]*?)\s*:\s*(.*?)\s*$", block, re.MULTILINE))
        if fields.get("State") != "Completed" or fields.get("Status") != "Success":
            bad.append(f"GPU {i}: {fields.get('State', '?')}/{fields.get('Status', '?')}")
        cliques.add((fields.get("ClusterUUID"), fields.get("CliqueId")))
    if bad:
        return Verdict(False, "NVLink fabric not ready: " + ", ".join(bad))
    if len(cliques) != 1:
        return Verdict(False, f"GPUs are in {len(cliques)} NVLink cliques, not one")
    return Verdict(True, f"{len(blocks)} GPUs registered in one NVLink clique")


# --- the verdict on the node ---

def decide(verdicts: dict[str, Verdict], level: int, previous: Optional[str]) -> Outcome:
    """The node's condition and labels from the checks' verdicts, in the order they ran. A node already
    failed (`previous` False) passes only on a clean run at the full level."""
    warnings = [w for v in verdicts.values() for w in v.warnings]
    for check, verdict in verdicts.items():
        if not verdict.passed:
            return Outcome("False", f"{check.capitalize()}Failed", _message(verdict.summary, warnings),
                           {LABEL: "failed", CHECK_LABEL: check})
    summary = "; ".join(v.summary for v in verdicts.values())
    if previous == "False" and level < FULL_LEVEL:
        return Outcome("False", "FullCheckRequired", _message(
            f"this node failed before; it passed level {level} but needs a clean level {FULL_LEVEL} run: {summary}",
            warnings), {LABEL: "failed"})
    return Outcome("True", "Passed", _message(summary, warnings), {LABEL: "passed", CHECK_LABEL: None})


def _message(summary: str, warnings: list[str]) -> str:
    text = summary + (f" (warnings: {' | '.join(warnings)})" if warnings else "")
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT - 3] + "..."


def judge(results: Path, checks: list[str], floor_gbps: float, efa_interfaces: int,
          efa_floor_mbps: float = 0) -> dict[str, Verdict]:
    """Each check's verdict from its recorded output (`<check>.out`) and exit code (`<check>.rc`)."""
    out: dict[str, Verdict] = {}
    for check in checks:
        text = (results / f"{check}.out").read_text() if (results / f"{check}.out").exists() else ""
        rc = (results / f"{check}.rc").read_text().strip() if (results / f"{check}.rc").exists() else "missing"
        if rc == "124":
            out[check] = Verdict(False, f"{check} timed out")
        elif check == "dcgm":
            out[check] = judge_dcgm(text)
        elif check == "nccl":
            out[check] = judge_nccl(text, floor_gbps)
        elif check == "efa":
            out[check] = judge_efa(text, efa_interfaces, efa_floor_mbps)
        else:
            out[check] = judge_imex(text)
        if out[check].passed and check != "dcgm" and rc not in ("0", "missing"):  # dcgmi's report speaks for it
            out[check] = Verdict(False, f"{check} exited {rc}: {out[check].summary}")
    return out


# --- replacing a failed node, within the pool's limit ---

def failed_nodes(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["metadata"]["name"] for n in nodes if (n["metadata"].get("labels") or {}).get(LABEL) == "failed"]


def replace_limit(pool_nodes: int, max_nodes: Optional[int], max_percent: Optional[int]) -> int:
    """How many failed nodes the pool may have while the checker still replaces them (never below one)."""
    if max_nodes:
        return max_nodes
    if max_percent:
        return max(1, pool_nodes * max_percent // 100)
    return 1


def replacement(nodes: list[dict[str, Any]], max_nodes: Optional[int], max_percent: Optional[int]) -> str:
    """Why a failed node of a pool with these `nodes` (itself among them, labelled failed) is held, or "" to
    replace it: more failed nodes than the limit point at a cause common to the pool, not at this node."""
    failed, limit = len(failed_nodes(nodes)), replace_limit(len(nodes), max_nodes, max_percent)
    if failed > limit:
        return (f"not replaced: {failed} of the pool's {len(nodes)} nodes failed, more than the {limit} it replaces "
                "(a cause common to the pool?)")
    return ""


def node_claim(node: dict[str, Any]) -> str:
    """The name of the NodeClaim that owns a Karpenter node ("" for any other node)."""
    owners = node.get("metadata", {}).get("ownerReferences") or []
    return next((o["name"] for o in owners if o.get("kind") == "NodeClaim"), "")


def instance_id(node: dict[str, Any]) -> str:
    """The EC2 instance behind a node, from its provider ID (`aws:///us-east-1a/i-0abc...`), or ""."""
    tail = str(node.get("spec", {}).get("providerID") or "").rsplit("/", 1)[-1]
    return tail if tail.startswith("i-") else ""


def terminate_params(instance: str) -> dict[str, str]:
    """Auto Scaling's TerminateInstanceInAutoScalingGroup, keeping the group's size: it launches a replacement."""
    return {"Action": "TerminateInstanceInAutoScalingGroup", "InstanceId": instance,
            "ShouldDecrementDesiredCapacity": "false", "Version": AUTOSCALING_VERSION}


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signed_headers(region: str, body: str, creds: dict[str, str], amz_date: str) -> dict[str, str]:
    """AWS Signature Version 4 headers of a POST of `body` to the region's Auto Scaling endpoint.
    `creds`: AccessKeyId, SecretAccessKey and Token, as the Pod Identity agent returns them."""
    host, day = f"autoscaling.{region}.amazonaws.com", amz_date[:8]
    headers = {"content-type": FORM, "host": host, "x-amz-date": amz_date, "x-amz-security-token": creds["Token"]}
    names_ = ";".join(sorted(headers))
    canonical = "\n".join(["POST", "/", "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", names_,
                           hashlib.sha256(body.encode()).hexdigest()])
    scope = f"{day}/{region}/autoscaling/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = b"AWS4" + creds["SecretAccessKey"].encode()
    for part in (day, region, "autoscaling", "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return {**headers, "authorization": f"AWS4-HMAC-SHA256 Credential={creds['AccessKeyId']}/{scope}, "
                                        f"SignedHeaders={names_}, Signature={signature}"}


# --- the Kubernetes API, from inside the pod ---

_SA = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def _api(method: str, path: str, body: Optional[dict[str, Any]] = None, content: str = "") -> Any:
    host = f"https://{os.environ['KUBERNETES_SERVICE_HOST']}:{os.environ['KUBERNETES_SERVICE_PORT']}"
    request = urllib.request.Request(host + path, method=method, data=json.dumps(body).encode() if body else None)
    request.add_header("Authorization", f"Bearer {(_SA / 'token').read_text().strip()}")
    if content:
        request.add_header("Content-Type", content)
    context = ssl.create_default_context(cafile=str(_SA / "ca.crt"))
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        return json.loads(response.read() or b"{}")


def condition_patch(outcome: Outcome, now: str, kind: str = CONDITION) -> dict[str, Any]:
    """A strategic merge patch of the node's status: conditions merge by type, so only this one changes."""
    return {"status": {"conditions": [{"type": kind, "status": outcome.status, "reason": outcome.reason,
                                       "message": outcome.message, "lastHeartbeatTime": now,
                                       "lastTransitionTime": now}]}}


def unchecked(node: dict[str, Any]) -> bool:
    """A node that registered before its pool was gated (no startup taint): it already runs work, so an active
    diagnostic there would compete with it. It is labelled and left alone."""
    return not any(t.get("key") == STARTUP_TAINT for t in node.get("spec", {}).get("taints") or [])


def workloads(pods: list[dict[str, Any]]) -> list[str]:
    """Pods on the node that are work, not node agents: neither a DaemonSet's nor a static pod (owned by the
    Node), and not finished. A node tainted while it already ran work (its pool gated later) has some."""
    out = []
    for pod in pods:
        owners = {o.get("kind") for o in pod.get("metadata", {}).get("ownerReferences") or []}
        if owners & {"DaemonSet", "Node"} or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        out.append(f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}")
    return out


def precheck() -> None:
    """The first container: on a node without the startup taint, or one already running work, record why and
    run no check (an active diagnostic would compete with the work)."""
    node = os.environ["NODE_NAME"]
    why = "no startup taint" if unchecked(_api("GET", f"/api/v1/nodes/{node}")) else ""
    if not why:
        busy = workloads(_api("GET", f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}").get("items", []))
        why = f"running work: {', '.join(busy[:5])}" if busy else ""
    if why:
        (Path(os.environ.get("RESULTS", "/results")) / SKIP).write_text(why + "\n")


def skipped(tainted: bool, why: str) -> Outcome:
    """A node the checks left alone: labelled unchecked; if it carries the startup taint (its pool was gated while
    it ran work), its condition goes True so the taint goes and the node keeps serving."""
    return Outcome("True" if tainted else "", "NotCheckedInUse", _message(f"not checked: {why}", []),
                   {LABEL: "unchecked"})


def recheck() -> None:
    """The idle re-check loop: every RECHECK_HOURS, on a node running no work, ask the DCGM container beside it for
    `dcgmi health -c` (the request file), judge the report and set GpuHealthPassive. A busy node is skipped."""
    node, results = os.environ["NODE_NAME"], Path(os.environ.get("RESULTS", "/results"))
    while True:
        busy = workloads(_api("GET", f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}").get("items", []))
        if not busy:
            outcome = _health_report(results, int(os.environ["HEALTH_TIMEOUT_SECONDS"]))
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            _api("PATCH", f"/api/v1/nodes/{node}/status", condition_patch(outcome, now, HEALTH_CONDITION),
                 "application/strategic-merge-patch+json")
            print(f"{HEALTH_CONDITION}={outcome.status} {outcome.reason}: {outcome.message}", flush=True)
        time.sleep(float(os.environ["RECHECK_HOURS"]) * 3600)


def _health_report(results: Path, timeout: int) -> Outcome:
    report = results / "health.out"
    report.unlink(missing_ok=True)
    (results / RUN).write_text("")
    for _ in range(timeout):
        if report.exists():
            return judge_health(report.read_text())
        time.sleep(1)
    (results / RUN).unlink(missing_ok=True)
    return Outcome("False", "TimedOut", f"dcgmi health gave no report within {timeout} s")


def main() -> None:
    if sys.argv[1:] == ["precheck"]:
        precheck()
        return
    if sys.argv[1:] == ["recheck"]:
        recheck()
        return
    node = os.environ["NODE_NAME"]
    skip = Path(os.environ.get("RESULTS", "/results")) / SKIP
    if skip.exists():
        outcome = skipped(not unchecked(_api("GET", f"/api/v1/nodes/{node}")), skip.read_text().strip())
        _write(node, outcome)
        _stay()
        return
    checks = os.environ["CHECKS"].split(",")
    verdicts = judge(Path(os.environ.get("RESULTS", "/results")), checks, float(os.environ.get("NCCL_FLOOR_GBPS") or 0),
                     int(os.environ.get("EFA_INTERFACES") or 0), float(os.environ.get("EFA_FLOOR_MBPS") or 0))
    current = _api("GET", f"/api/v1/nodes/{node}")
    previous = next((c["status"] for c in current.get("status", {}).get("conditions", []) if c["type"] == CONDITION),
                    None)
    outcome = decide(verdicts, int(os.environ["LEVEL"]), previous)
    _write(node, outcome)
    if outcome.status == "False" and os.environ.get("REPLACE_VIA"):
        _replace(node, outcome, os.environ["REPLACE_VIA"])
    _stay()


def _replace(node: str, outcome: Outcome, via: str) -> None:
    """Replace the failed node (its NodeClaim, or its instance in the Auto Scaling group), or say why it stays."""
    pool = (_api("GET", f"/api/v1/nodes/{node}").get("metadata", {}).get("labels") or {}).get(POOL_LABEL, "")
    nodes = _api("GET", f"/api/v1/nodes?labelSelector={POOL_LABEL}%3D{pool}").get("items", [])
    this: dict[str, Any] = next((n for n in nodes if n["metadata"]["name"] == node), {})
    held = replacement(nodes, _int_env("MAX_FAILED_NODES"), _int_env("MAX_FAILED_PERCENT"))
    target = node_claim(this) if via == "nodeclaim" else instance_id(this)
    if held or not target:
        held = held or f"not replaced: the node has no {'NodeClaim' if via == 'nodeclaim' else 'EC2 instance ID'}"
        _write(node, Outcome(outcome.status, outcome.reason, _message(f"{outcome.message}; {held}", []),
                             outcome.labels))
        return
    if via == "nodeclaim":
        _api("DELETE", f"{NODECLAIM_API}/{target}")
        print(f"deleted NodeClaim {target}: Karpenter replaces the node", flush=True)
        return
    _terminate(target, (this["metadata"].get("labels") or {}).get(REGION_LABEL, ""))
    print(f"terminated {target} in its Auto Scaling group: the group launches a replacement", flush=True)


def _terminate(instance: str, region: str) -> None:
    """Through the Pod Identity agent's credentials (the role allows this cluster's node groups only)."""
    request = urllib.request.Request(os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"])
    request.add_header("Authorization", Path(os.environ["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"]).read_text().strip())
    with urllib.request.urlopen(request, timeout=10) as response:
        creds = json.loads(response.read())
    body = urllib.parse.urlencode(terminate_params(instance))
    headers = signed_headers(region, body, creds, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    post = urllib.request.Request(f"https://{headers['host']}/", data=body.encode(), method="POST",
                                  headers={k: v for k, v in headers.items() if k != "host"})
    with urllib.request.urlopen(post, timeout=30) as response:
        response.read()


def _int_env(name: str) -> Optional[int]:
    value = os.environ.get(name, "")
    return int(value) if value else None


def _write(node: str, outcome: Outcome) -> None:
    """The condition (when the outcome has one), then the labels: the label moves the checker off the node."""
    if outcome.status:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _api("PATCH", f"/api/v1/nodes/{node}/status", condition_patch(outcome, now),
             "application/strategic-merge-patch+json")
    _api("PATCH", f"/api/v1/nodes/{node}", {"metadata": {"labels": outcome.labels}}, "application/merge-patch+json")
    print(f"{CONDITION}={outcome.status or '-'} {outcome.reason}: {outcome.message}", flush=True)


def _stay() -> None:
    while os.environ.get("STAY", "true") == "true":  # a DaemonSet pod: the label moves it off this node
        time.sleep(3600)


if __name__ == "__main__":
    main()
