"""Job history (render/usage_report.py, usage_report_job.py): the month's finished GPU Jobs, one CSV row each,
from recorded query answers; and every job query is PromQL promtool accepts."""
import subprocess
from datetime import datetime, timezone

import pytest
import yaml

from gpu_platform.render import usage_report as r
from gpu_platform.render import usage_report_job as job

START = datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp()
END = datetime(2026, 11, 1, tzinfo=timezone.utc).timestamp()
DAY = 86400


def answer(samples):
    return {"status": "success", "data": {"resultType": "vector",
                                          "result": [{"metric": m, "value": [0, repr(v)]} for m, v in samples]}}


def held(name, resource, n, pool="a100-train", kind="whole", namespace="research"):
    return ({"namespace": namespace, "owner_name": name, "resource": resource, "pool": pool, "kind": kind}, n)


def by_job(name, value, namespace="research", **labels):
    return ({"namespace": namespace, "job_name": name, **labels}, value)


def responses(**given):
    base = {k: answer([]) for k in r.JOB_KEYS}
    base[r.TEAMS] = answer([({"namespace": "research", "team": "research"}, 1.0)])
    return {**base, **{k: answer(v) for k, v in given.items()}}


def test_a_failed_job_ends_when_it_was_last_active_and_slices_are_listed_per_resource():
    got = r.job_rows(responses(
        jobGpus=[held("tune", "nvidia_com_mig_1g_10gb", 2, "h100-mig", "mig"),
                 held("tune", "nvidia_com_mig_3g_40gb", 1, "h100-mig", "mig")],
        jobNodes=[({"namespace": "research", "owner_name": "tune", "node": "n2"}, 1.0),
                  ({"namespace": "research", "owner_name": "tune", "node": "n1"}, 1.0)],
        jobStarts=[by_job("tune", START + DAY)], jobLastActive=[by_job("tune", START + 2 * DAY)],
        jobFailed=[by_job("tune", 1.0)], jobQueues=[by_job("tune", 1.0, **{r.QUEUE_LABEL: "debug"})],
    ), "2026-10", START, END)
    (row,) = got
    assert (row.team, row.job, row.queue, row.outcome, row.gpus, row.kinds, row.pools, row.nodes) == (
        "research", "tune", "debug", "failed", 3, "mig", "h100-mig", "n1;n2")
    assert row.gpu_resources == "nvidia_com_mig_1g_10gb=2;nvidia_com_mig_3g_40gb=1"
    assert (row.start, row.end) == ("2026-10-02T00:00:00Z", "2026-10-03T00:00:00Z")


@pytest.mark.parametrize("ended,outcome", [
    (START - 1, "succeeded"),  # finished in September: last month's report has it
    (END, "succeeded"),  # finished as November began: next month's
    (START + DAY, None),  # neither succeeded nor failed: still running, or removed before it ended
])
def test_only_jobs_finished_within_the_month_are_listed(ended, outcome):
    outcomes = {"jobSucceeded": [by_job("train", 1.0)]} if outcome else {}
    got = r.job_rows(responses(jobGpus=[held("train", "nvidia_com_gpu", 8)], jobCompletions=[by_job("train", ended)],
                               **outcomes), "2026-10", START, END)
    assert got == []


def test_jobs_without_gpus_are_not_listed_and_a_namespace_without_a_team_stands_for_itself():
    got = r.job_rows(responses(
        jobGpus=[held("train", "nvidia_com_gpu", 8, namespace="sandbox")],
        jobCompletions=[by_job("train", START + DAY, "sandbox"), by_job("cpu-only", START + DAY)],
        jobSucceeded=[by_job("train", 1.0, "sandbox"), by_job("cpu-only", 1.0)]), "2026-10", START, END)
    assert [(x.team, x.job, x.queue, x.nodes, x.start) for x in got] == [("sandbox", "train", "", "", "")]


def test_the_csv_has_the_named_columns():
    row = r.JobRow("2026-10", "research", "research", "train", "vision", 8, "nvidia_com_gpu=8", "whole",
                   "a100-train", "n1", "2026-10-10T00:00:00Z", "2026-10-10T06:00:00Z", "succeeded")
    assert r.jobs_csv([row]).splitlines() == [
        ",".join(r.JOB_COLUMNS),
        "2026-10,research,research,train,vision,8,nvidia_com_gpu=8,whole,a100-train,n1,2026-10-10T00:00:00Z,"
        "2026-10-10T06:00:00Z,succeeded"]


def test_missing_job_answers_are_named():
    with pytest.raises(r.ReportError, match="jobGpus"):
        r.job_rows({r.TEAMS: answer([])}, "2026-10", START, END)


def test_every_report_query_is_valid_promql(tmp_path):
    queries = r.window_queries(job.query_templates(), 744)
    rules = {"groups": [{"name": "report-queries", "rules": [
        {"record": f"report:{key}", "expr": promql} for key, promql in sorted(queries.items())]}]}
    path = tmp_path / "queries.yaml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(r.JOB_KEYS) <= set(queries)


def test_promtool_finds_each_jobs_gpus_pool_kind_and_nodes_from_synthetic_series(tmp_path):
    """Two pods of one Job on two nodes of a100-train, 8 GPUs each, for an hour; a CPU pod of another Job."""
    from gpu_platform.render import usage_rules as rec

    queries = r.window_queries(job.query_templates(), 2)
    pods = [("train-0", "n1", 8), ("train-1", "n2", 8), ("prep-0", "n3", 0)]
    series = []
    for pod, node, gpus in pods:
        owner = pod.rsplit("-", 1)[0]
        series.append({"series": f'kube_pod_owner{{namespace="research",pod="{pod}",owner_kind="Job",owner_name="{owner}"}}',
                       "values": "1x24"})
        series.append({"series": f'kube_pod_info{{namespace="research",pod="{pod}",node="{node}"}}', "values": "1x24"})
        resource = "nvidia_com_gpu" if gpus else "cpu"
        series.append({"series": (f'kube_pod_container_resource_requests{{namespace="research",pod="{pod}",'
                                  f'container="main",node="{node}",resource="{resource}"}}'),
                       "values": f"{gpus or 2}x12 _x12"})
        series.append({"series": f'{rec.NODE_POOL}{{node="{node}",pool="a100-train"}}', "values": "1x24"})
    series.append({"series": f'{rec.UNIT_SHARE}{{pool="a100-train",resource="nvidia_com_gpu",kind="whole"}}',
                   "values": "1x24"})
    tests = {"rule_files": [], "evaluation_interval": "5m", "tests": [{
        "interval": "5m", "input_series": series,
        "promql_expr_test": [
            {"expr": queries[r.JOB_GPUS], "eval_time": "2h", "exp_samples": [
                {"labels": '{namespace="research",owner_name="train",pool="a100-train",resource="nvidia_com_gpu",'
                           'kind="whole"}', "value": 16}]},
            {"expr": queries[r.JOB_NODES], "eval_time": "2h", "exp_samples": [
                {"labels": f'{{namespace="research",owner_name="{o}",node="{n}"}}', "value": 1}
                for o, n in (("prep", "n3"), ("train", "n1"), ("train", "n2"))]},
        ]}]}
    path = tmp_path / "jobs.test.yaml"
    path.write_text(yaml.safe_dump(tests))
    result = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
