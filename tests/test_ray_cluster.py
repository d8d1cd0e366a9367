"""`eval --ray` on a two-node Ray cluster on one machine (ray.cluster_utils.Cluster, one CPU each, loopback only):
one worker per node, outputs byte-identical to one process."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder
from tests.ray_helpers import (
    copies_of_the_example,
    eval_args,
    loopback_ray_env,
    ray_connections_off_loopback,
    same_outputs,
)

loopback_ray_env()  # before ray is imported, which reads it
ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'argue-judge[ray]')")
runner = CliRunner()


@pytest.fixture(scope="module")
def two_nodes():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_two_nodes_judge_one_worker_each_and_write_the_bytes_of_one_process(two_nodes, tmp_path):
    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    reports = copies_of_the_example(tmp_path / "data", 4)
    with FakeEndpoint(smart_responder, latency=0.02) as ep:
        one = runner.invoke(app, eval_args(reports, ep.api_base, tmp_path / "cache-one", tmp_path / "one"))
        assert one.exit_code == 0, one.output
        two = runner.invoke(app, eval_args(reports, ep.api_base, tmp_path / "cache-two", tmp_path / "two",
                                           "--ray", "auto"))
        assert two.exit_code == 0, two.output
        counted, off = ray_connections_off_loopback()
    assert same_outputs(tmp_path / "one", tmp_path / "two") == []
    assert counted > 0 and off == [], off
