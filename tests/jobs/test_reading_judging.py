"""Issue 43's second round: the forecaster's kept ranks and arrays give what sorting the lists
gave, and the package's YAML read by libyaml is the same data the Python loader reads."""

from __future__ import annotations

from importlib import resources

import numpy as np
import yaml

from gpuvet.knowledge.package_yaml import load_package_yaml
from gpuvet.watch.forecast_fit import Ranked, Tail, _median_x, p95, p95_of


def test_ranked_keeps_the_p95_of_the_last_values() -> None:
    rng = np.random.default_rng(43)
    values = np.round(rng.normal(600, 20, 3000), 0).tolist()  # whole watts: many ties
    kept, day = Ranked(1000), Ranked(144)
    for n, v in enumerate(values, 1):
        kept.add(v)
        day.add(v)
        if n % 97 == 0 or n in (1, 2, 143, 144, 145, 999, 1000, 1001):
            assert kept.p95() == p95(values[:n][-1000:])
            assert day.p95() == p95(values[:n][-144:])
            assert len(kept) == min(n, 1000)


def test_tail_is_the_last_values_as_an_array() -> None:
    tail, seen = Tail(5), []
    for v in range(23):
        tail.add(float(v))
        seen.append(float(v))
        assert tail.view().tolist() == seen[-5:]
        assert p95_of(tail.view()) == p95(seen[-5:])


def test_median_of_hours_is_numpys() -> None:
    for x in (np.arange(7) / 24.0, np.arange(96) / 24.0, np.array([3.0, 1.0, 2.0, 5.0]), np.array([2.0])):
        assert _median_x(x) == float(np.median(x))


def test_package_yaml_reads_as_the_python_loader_reads_it() -> None:
    for package in ("gpuvet.knowledge", "gpuvet.doctor", "gpuvet.doctor.playbooks", "gpuvet.captures",
                    "gpuvet.ledger"):
        files = [f for f in resources.files(package).iterdir() if f.name.endswith(".yaml")]
        assert files, package
        for f in files:
            text = f.read_text(encoding="utf-8")
            assert load_package_yaml(text) == yaml.safe_load(text), f.name
