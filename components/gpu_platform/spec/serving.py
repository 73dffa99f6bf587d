"""`teams[].services[]`: the model servers a team declares, each checked against its pool before deploy
(spec/rules_serving.py) and built in the team's namespace (decisions/serving.py, render/serving.py).

A service names its runtime (vLLM first), its model (a Hugging Face repository at a pinned commit, or an S3
prefix; its weight size given or derived from parameters and dtype), its GPU shape on a named pool (whole
GPUs with tensor parallelism, a MIG profile, or one time-sliced replica on a time-slicing pool), its replicas
and what scales them.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from gpu_platform.facts import serving
from gpu_platform.spec.fields import DnsLabel, S3Uri
from gpu_platform.spec.strict import StrictModel

HF_REPO = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"
COMMIT = r"^[0-9a-f]{40}$"
CONFIG_KEY = r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$"
SERVICE_NAME = r"^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$"  # room for the platform's suffixes within 63


class HuggingFaceModelSpec(StrictModel):
    """A Hugging Face Hub repository at a pinned commit."""

    repo: str = Field(pattern=HF_REPO)  # owner/name on the Hugging Face Hub
    revision: str = Field(pattern=COMMIT)  # a 40-hex commit: a branch or tag would move under the fleet
    # The Pulumi config key holding a Hub token (`pulumi config set --secret <key> hf_...`), for gated models
    token_secret: Optional[str] = Field(None, pattern=CONFIG_KEY)


class ModelSpec(StrictModel):
    """The model a service serves: a pinned Hugging Face revision or an S3 prefix, and its weights' size."""

    hugging_face: Optional[HuggingFaceModelSpec] = None
    s3: Optional[S3Uri] = None  # s3://bucket/prefix/ holding the weights in Hugging Face layout
    weights_gib: Optional[float] = Field(None, gt=0, le=4096, alias="weightsGiB")
    parameter_count: Optional[float] = Field(None, gt=0, le=10000)  # billions
    dtype: Optional[Literal[tuple(serving.DTYPE_BYTES)]] = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_source(self) -> "ModelSpec":
        if (self.hugging_face is None) == (self.s3 is None):
            raise ValueError("give exactly one source: huggingFace {repo, revision} or s3 (s3://bucket/prefix)")
        if self.weights_gib is None and (self.parameter_count is None or self.dtype is None):
            raise ValueError("give weightsGiB, or parameterCount (billions) and dtype "
                             f"({', '.join(serving.DTYPE_BYTES)}) to derive it")
        return self

    @property
    def size_gib(self) -> float:
        """The weights' size: as given, else parameters x bytes per parameter."""
        if self.weights_gib is not None:
            return self.weights_gib
        return float(self.parameter_count or 0) * 1e9 * serving.DTYPE_BYTES[str(self.dtype)] / 2**30


class ServiceGpuSpec(StrictModel):
    """The GPU shape of one replica: its pool, whole GPUs and tensor parallelism, or a MIG profile."""

    pool: DnsLabel  # a nodePools[] name
    count: int = Field(1, ge=1, le=72)  # whole GPUs per replica (1 for a MIG slice or a time-sliced replica)
    tensor_parallel: Optional[int] = Field(None, ge=1, le=72)  # default: count
    mig_profile: Optional[str] = Field(None, max_length=32)  # a MIG pool's profile, e.g. 3g.40gb

    @property
    def tp(self) -> int:
        return self.tensor_parallel or self.count


class ReplicasSpec(StrictModel):
    """The service's replica bounds."""

    min: int = Field(1, ge=0, le=1000)
    max: int = Field(1, ge=1, le=1000)

    @model_validator(mode="after")
    def _order(self) -> "ReplicasSpec":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must be <= max ({self.max})")
        return self


class ServiceAutoscalingSpec(StrictModel):
    """What scales the service (KEDA, on the server's own metrics and GPU activity)."""

    # queue: waiting requests per replica (vllm:num_requests_waiting); ttft: p90 time to first token, seconds
    signal: Literal["queue", "ttft"] = "queue"
    target: float = Field(5, gt=0)
    gpu_activity_percent: int = Field(80, ge=1, le=100)  # the second trigger: DCGM GPU utilisation


class ServiceAlertsSpec(StrictModel):
    """When the service's alerts fire (routed to the team by its namespace)."""
    ttft_seconds: float = Field(2, gt=0, le=600)  # p90 time to first token over 5 minutes
    queue_depth: int = Field(10, ge=1)  # requests waiting, summed over replicas
    kv_cache_used_percent: float = Field(95, gt=0, le=100)
    for_minutes: int = Field(10, ge=1, le=1440)
    at_max_minutes: int = Field(30, ge=1, le=1440)  # replicas pinned at replicas.max this long


class ServiceSpec(StrictModel):
    """A model server the team runs on a pool: model, GPU shape, replicas and scaling."""

    name: str = Field(pattern=SERVICE_NAME)
    runtime: Literal[tuple(serving.RUNTIMES)] = "vllm"  # type: ignore[valid-type]
    model: ModelSpec
    gpu: ServiceGpuSpec
    replicas: ReplicasSpec = Field(default_factory=ReplicasSpec)
    autoscaling: Optional[ServiceAutoscalingSpec] = None  # none: replicas.min replicas, always
    gpu_memory_utilization: float = Field(0.90, gt=0, le=0.98)
    max_model_len: Optional[int] = Field(None, ge=256, le=10_000_000)
    kv_cache_floor_gib: float = Field(2, ge=0, le=1024, alias="kvCacheFloorGiB")  # per GPU, beyond weights
    alerts: ServiceAlertsSpec = Field(default_factory=ServiceAlertsSpec)
    # internal: an internal Network Load Balancer for callers in the VPC outside the cluster (AWS Load Balancer
    # Controller); none: the ClusterIP Service only
    load_balancer: Optional[Literal["internal"]] = None
