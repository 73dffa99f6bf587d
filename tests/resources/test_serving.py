"""What the platform registers for a team's services, through the real planner: the prefetch before the server,
a Hub token as a Kubernetes Secret from a Pulumi secret, an S3 model's reader limited to its prefix by Pod
Identity, and custom objects after the CRDs they need."""
import json

from tests.support.stacks import cached_plan, resource, resources, stack_platform

JOB, DEPLOYMENT, SECRET = "kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Secret"


def _dev(edit=None):
    platform = stack_platform("dev")
    if edit:
        edit(platform)
    return cached_plan(platform, stack="dev")


def test_the_server_waits_for_its_revisions_prefetch():
    plan = _dev()
    job = resource(plan, JOB, "serving-research-qwen-chat-prefetch")
    server = resource(plan, DEPLOYMENT, "serving-research-qwen-chat")
    assert job["urn"] in server["options"]["dependsOn"]
    assert job["inputs"]["metadata"]["name"] == "qwen-chat-prefetch-7ae55760"


def test_a_hub_token_is_a_secret_made_from_the_pulumi_secret():
    def gated(platform):  # the shipped stacks hold this key as a `secure:` value
        platform["teams"][0]["services"][0]["model"]["huggingFace"]["tokenSecret"] = "researchSlackWebhook"
    plan = _dev(gated)
    [secret] = [r for r in resources(plan, SECRET) if r["name"] == "serving-research-qwen-chat-hf-token"]
    assert secret["inputs"]["metadata"]["name"] == "qwen-chat-hf-token"
    assert secret["inputs"]["stringData"] in ("[secret]", {"token": "[secret]"})  # never in the plan
    job = resource(plan, JOB, "serving-research-qwen-chat-prefetch")
    assert secret["urn"] in job["options"]["dependsOn"]


def test_an_s3_model_reads_through_pod_identity_only_its_prefix():
    def from_s3(platform):
        platform["teams"][0]["services"][0]["model"] = {"s3": "s3://acme-models/qwen/0.5b", "weightsGiB": 1}
    plan = _dev(from_s3)
    assoc = resource(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation",
                     "serving-research-qwen-chat-prefetch")["inputs"]
    assert (assoc["namespace"], assoc["serviceAccount"]) == ("research", "qwen-chat-prefetch")
    policy = json.loads(resource(plan, "aws:iam/rolePolicy:RolePolicy", "serving-research-qwen-chat-prefetch")
                        ["inputs"]["policy"])
    assert {s["Resource"] for s in policy["Statement"]} == {"arn:aws:s3:::acme-models",
                                                            "arn:aws:s3:::acme-models/qwen/0.5b/*"}


def test_the_scaler_and_monitor_wait_for_their_crds():
    plan = _dev()
    keda = resource(plan, "kubernetes:helm.sh/v3:Release", "serving-keda")
    scaler = resource(plan, "kubernetes:keda.sh/v1alpha1:ScaledObject", "serving-research-qwen-chat-scaler")
    assert keda["urn"] in scaler["options"]["dependsOn"]
    assert keda["inputs"]["version"] == "2.20.2"
