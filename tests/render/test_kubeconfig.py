"""The kubeconfig users and the Kubernetes provider connect with."""
import json

import yaml

from gpu_platform.render.kubeconfig import EXEC_API_VERSION, kubeconfig, kubeconfig_json

ARGS = ("gpu-dev", "https://ABC.gr7.eu-west-1.eks.amazonaws.com", "Q0FEQVRB", "eu-west-1")


def test_token_comes_from_aws_eks_get_token_for_this_cluster_and_region():
    exec_ = kubeconfig(*ARGS)["users"][0]["user"]["exec"]
    assert exec_["command"] == "aws"
    args = exec_["args"]
    assert args[:2] == ["eks", "get-token"]
    assert args[args.index("--cluster-name") + 1] == "gpu-dev"
    assert args[args.index("--region") + 1] == "eu-west-1"
    assert exec_["apiVersion"] == EXEC_API_VERSION == "client.authentication.k8s.io/v1beta1"


def test_cluster_entry_carries_endpoint_and_ca():
    cluster = kubeconfig(*ARGS)["clusters"][0]["cluster"]
    assert cluster == {"server": ARGS[1], "certificate-authority-data": ARGS[2]}


def test_current_context_resolves_to_the_cluster_and_user():
    cfg = kubeconfig(*ARGS)
    context = {c["name"]: c["context"] for c in cfg["contexts"]}[cfg["current-context"]]
    assert context["cluster"] in {c["name"] for c in cfg["clusters"]}
    assert context["user"] in {u["name"] for u in cfg["users"]}


def test_no_static_credential_is_written():
    user = kubeconfig(*ARGS)["users"][0]["user"]
    assert set(user) == {"exec"}


def test_json_form_is_also_valid_yaml_for_kubectl():
    text = kubeconfig_json(*ARGS)
    assert yaml.safe_load(text) == json.loads(text) == kubeconfig(*ARGS)
