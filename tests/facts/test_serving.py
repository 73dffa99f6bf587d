"""The serving facts: the runtime's image pinned by version and digest, and the flags and metrics of that version
as read from its source (facts/upstream/vllm-v0.22.1)."""
import re

from gpu_platform.facts import serving


def test_each_runtime_is_pinned_by_version_and_index_digest():
    for rt in serving.RUNTIMES.values():
        assert re.fullmatch(r"v\d+\.\d+\.\d+", rt.version)
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", rt.digest)
        assert rt.reference == f"{rt.image}:{rt.version}@{rt.digest}"


def test_the_flag_list_is_the_serve_parsers_long_options():
    flags = serving.RUNTIMES["vllm"].accepted_flags
    assert all(f.startswith("--") for f in flags)
    # engine, frontend and serve-only options all appear; a removed v0 option does not
    assert {"--tensor-parallel-size", "--gpu-memory-utilization", "--port", "--api-server-count"} <= flags
    assert "--disable-log-requests" not in flags


def test_the_metrics_the_platform_reads_are_exported_at_the_pinned_version():
    names = serving.RUNTIMES["vllm"].metric_names
    for metric in (serving.VLLM_WAITING, serving.VLLM_RUNNING, serving.VLLM_KV_CACHE_USAGE, serving.VLLM_TTFT):
        assert metric in names
    assert "vllm:gpu_cache_usage_perc" not in names  # renamed kv_cache_usage_perc before this version


def test_the_s3_prefetch_image_is_pinned_by_version_and_digest_with_its_source():
    image = serving.AWS_CLI_IMAGE
    assert re.fullmatch(r"\d+\.\d+\.\d+", image.version) and re.fullmatch(r"sha256:[0-9a-f]{64}", image.digest)
    assert image.reference == f"{image.image}:{image.version}@{image.digest}" and image.digest_source
