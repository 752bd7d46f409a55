from tests.fakekube.fixtures import fake_kube, kube_api_client, kubeconfig_path

__all__ = ["fake_kube", "kube_api_client", "kubeconfig_path"]
