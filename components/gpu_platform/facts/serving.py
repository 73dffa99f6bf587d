"""Model serving facts: the runtimes a team's service may run (image pinned by version and digest, the flags
and metrics of that version), how many bytes a weight takes per dtype, and how fast a node reads weights
from the model cache. Each figure names where it was read; the sizing in decisions/serving.py reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from collections.abc import Mapping

UPSTREAM = Path(__file__).resolve().parent / "upstream"


@dataclass(frozen=True)
class Runtime:
    """A model server: its image (pinned by version and digest), its port, probes and metrics."""

    key: str
    version: str
    image: str  # repository, without tag or digest
    digest: str  # the multi-arch index digest of `image:version`
    digest_source: str
    port: int
    health_path: str  # answers 200 once the engine has loaded the weights
    metrics_path: str
    upstream: str  # folder under facts/upstream holding the version's accepted flags and metric names

    @property
    def reference(self) -> str:
        """`repository:version@sha256:...`: the tag for readers, the digest for the kubelet."""
        return f"{self.image}:{self.version}@{self.digest}"

    @property
    def accepted_flags(self) -> frozenset[str]:
        return _lines(UPSTREAM / self.upstream / "serve-flags.txt")

    @property
    def metric_names(self) -> frozenset[str]:
        return _lines(UPSTREAM / self.upstream / "metrics.txt")


def _lines(path: Path) -> frozenset[str]:
    return frozenset(line.strip() for line in path.read_text().splitlines() if line.strip() and line[0] != "#")


# vLLM's OpenAI-compatible server. The digest of vllm/vllm-openai:v0.22.1 is recorded, read from the registry
# manifests, in public qualification records that pin the image by it (infercrane/infercrane runtime workload
# `vllm/vllm-openai@sha256:953d3a06...`, and independent benchmark notes listing tag and digest together);
# the flags and metric names come from the vllm-project/vllm v0.22.1 source (facts/upstream/vllm-v0.22.1).
RUNTIMES: Mapping[str, Runtime] = MappingProxyType({r.key: r for r in (
    Runtime("vllm", "v0.22.1", "docker.io/vllm/vllm-openai",
            "sha256:953d3a06d5e64ab582985cd7401289d3abf2a2c14ef2158e9a84313daeec77d7",
            "public records pinning vllm/vllm-openai:v0.22.1 by this digest (infercrane/infercrane)",
            8000, "/health", "/metrics", "vllm-v0.22.1"),
)})

# The vLLM metrics the autoscaler and the alerts read (vllm/v1/metrics/loggers.py at v0.22.1).
VLLM_WAITING = "vllm:num_requests_waiting"
VLLM_RUNNING = "vllm:num_requests_running"
VLLM_KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"  # 0 to 1
VLLM_TTFT = "vllm:time_to_first_token_seconds"  # a histogram

# KEDA scales servers on their own metrics (Prometheus scaler) and on GPU activity: kedacore/charts at v2.20.2
# (values.yaml and the ScaledObject CRD kept in facts/upstream: keda-values-2.20.2.yaml, crds/keda-v2.20.2).
KEDA_CHART = ("https://kedacore.github.io/charts", "keda")
KEDA_CHART_VERSION = "2.20.2"
KEDA_NAMESPACE = "keda"
KEDA_CRDS = "keda-v2.20.2"
SCALED_OBJECT_API = ("keda.sh/v1alpha1", "ScaledObject")

# An internal Network Load Balancer per service that asks for one (loadBalancer: internal), made by the AWS Load
# Balancer Controller: kubernetes-sigs/aws-load-balancer-controller v3.5.0, its chart (helm/ at that tag, published
# in aws/eks-charts) and its IAM policy (docs/install/iam_policy.json), kept in facts/upstream.
LB_CONTROLLER_CHART = ("https://aws.github.io/eks-charts", "aws-load-balancer-controller")
LB_CONTROLLER_CHART_VERSION = "3.5.0"
LB_CONTROLLER_POLICY = "aws-load-balancer-controller-iam-policy-v3.5.0.json"
LB_CONTROLLER_NAMESPACE = "kube-system"
LB_CONTROLLER_SERVICE_ACCOUNT = "aws-load-balancer-controller"
NLB_CLASS = "service.k8s.aws/nlb"  # the controller's loadBalancerClass: the in-tree cloud provider leaves it alone

# Bytes per parameter of each weight dtype the stack file names (bf16/fp16 two bytes, fp8/int8 one, int4 half).
DTYPE_BYTES: Mapping[str, float] = MappingProxyType({"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5})

# What one node reads from the model cache (EFS, Regional, Elastic throughput): 1,500 MiBps per client (AWS EFS
# user guide, "Amazon EFS performance", Performance summary: per-client read/write, efs-utils 2 / efs-proxy, as
# the aws-efs-csi-driver mounts). The probes assume a third of it: other pods on the node read too.
MODEL_CACHE_CLIENT_MIBPS = 1500
MODEL_CACHE_READ_SHARE = 1 / 3

# What the engine needs besides weights and its KV cache on each GPU: CUDA context, activations and CUDA graphs.
# A planning figure (vLLM profiles it at start; a model that does not fit fails there, this check fails earlier).
ENGINE_OVERHEAD_GIB_PER_GPU = 1.5
# Seconds from weights in memory to serving: profiling, KV-cache allocation and CUDA-graph capture. The field
# guides' readiness probes wait 120 s or more before a vLLM server answers.
ENGINE_WARMUP_SECONDS = 120
# Host memory of a server (its pod's memory request and limit): a planning figure, not a vLLM statement. The
# API server and engine-core processes (Python, PyTorch, tokenizer, scheduler) take a base; each GPU worker
# process its PyTorch and CUDA runtime and CUDA-graph host state; and the weights stream through host memory one
# checkpoint file at a time (safetensors files mapped, then copied to the GPU), a file being at most
# transformers' default `save_pretrained(max_shard_size="5GB")`. A pod gets the larger of this and its GPUs'
# share of the node.
SERVER_HOST_BASE_GIB = 2.0
SERVER_HOST_PER_GPU_GIB = 2.0
CHECKPOINT_SHARD_GB = 5.0
# Seconds a node takes from scale-up to a schedulable GPU (instance launch, join, GPU operator ready): the plan
# adds it to a cold start from zero.
NODE_READY_SECONDS = 300

# The prefetch Job runs on the system nodes (a GPU node's taint admits only pods that request a GPU) from images
# pinned by version and digest, installing nothing when it starts (no package index reached at run time):
# - a Hugging Face model: the service's own runtime image, whose Python ships huggingface_hub (vLLM depends on it
#   through transformers: vllm-project/vllm requirements/common.txt, `transformers >= 4.56.0, < 5`, read at
#   commit 0073e449, not at the v0.22.1 tag; transformers requires huggingface-hub); the script calls only
#   `snapshot_download(repo_id, revision=)`, present in every release of it. The exact huggingface_hub build is
#   the one in the runtime image's digest.
# - an S3 model: the AWS CLI v2 image (`aws s3 sync`, credentials from EKS Pod Identity). The digest of
#   public.ecr.aws/aws-cli/aws-cli:2.36.49 is as a public Helm chart pins it, tag and digest together
#   (`aws-cli:2.36.49@sha256:f42bf088...`); it was not read from the registry itself.


@dataclass(frozen=True)
class Image:
    """A container image pinned by version (for readers) and digest (for the kubelet)."""

    image: str  # repository, without tag or digest
    version: str
    digest: str
    digest_source: str

    @property
    def reference(self) -> str:
        return f"{self.image}:{self.version}@{self.digest}"


# The AWS CLI for the platform's jobs (the S3 prefetch, the usage report's upload): v2 reads EKS Pod Identity
# credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI and its token file) through its container provider.
AWS_CLI_IMAGE = Image("public.ecr.aws/aws-cli/aws-cli", "2.36.49",
                      "sha256:f42bf088cb1456ba9e179ce71fdeb22cc46ff64ea1e3aeae8251ff81391f5bb1",
                      "a public Helm chart template pinning aws-cli:2.36.49 by this digest (not read from the registry)")
