"""Issue 49: the step planner's and the memory planner's formulas against their references —
ZeRO traffic per Rajbhandari et al. §7.2.1, the pipeline bubble per Narayanan et al. 2021,
attention FLOPs per PaLM App. B, and DeepSpeed's ZeRO-2/3 estimators under --accounting deepspeed."""

import json
from dataclasses import replace

import pytest

from gpuvet.cli.app import main
from gpuvet.node.build import build_node
from gpuvet.node.memory import Architecture, Job, PlanError, memory_per_module
from gpuvet.node.spec import load_spec
from gpuvet.plan.step import plan_step

ARCH = Architecture(layers=32, hidden=4096, heads=32)
GB = 1e9


def _node(preset="hgx-h200-8"):
    return build_node(*load_spec(preset))


def _job(**kw):
    base = dict(params=float(ARCH.parameters()), zero=1, dp=8, arch=ARCH, seq_len=4096, recompute="selective")
    return Job(**(base | kw))


def test_zero2_traffic_equals_zero1s_and_zero3_adds_one_weight_gather():
    node = _node()
    one, two, three = (plan_step(_job(zero=z), node) for z in (1, 2, 3))
    psi_bytes = 2.0 * ARCH.parameters()  # 16-bit gradients (and weights) of the whole model
    assert one.dp_bytes == two.dp_bytes == pytest.approx(2 * 7 / 8 * psi_bytes)  # 2Ψ, the all-reduce's volume
    assert one.dp_comm_s == two.dp_comm_s  # the same collectives (it was 48 against 31 ms)
    assert three.dp_bytes == pytest.approx(1.5 * two.dp_bytes)  # 3Ψ
    assert plan_step(_job(zero=0), node).dp_bytes == pytest.approx(one.dp_bytes)  # plain DP all-reduce: 2Ψ too


@pytest.mark.parametrize(("p", "m"), [(4, 8), (4, 4), (2, 16)])
def test_bubble_is_p_minus_1_over_m_of_the_ideal_time(p, m):
    plan = plan_step(_job(dp=1, pp=p, zero=0), _node(), micro_batches=m)
    assert plan.bubble_s == pytest.approx(plan.compute_s * (p - 1) / m, rel=1e-12)


def test_step_flops_count_attention_and_reach_the_fp8_rate():
    node = _node()
    plan = plan_step(_job(), node, micro_batches=1)
    tokens = 8 * 4096
    weights = 6.0 * ARCH.parameters() * tokens
    attention = 12.0 * 32 * 4096 * 4096 * tokens
    assert plan.flops == pytest.approx(weights + attention, rel=1e-12)
    assert attention / weights == pytest.approx(0.16, abs=0.01)  # what 6·N·tokens left out at 4K
    fp8 = plan_step(_job(precision="fp8"), node, micro_batches=1)
    peak = node.modules[0].model
    assert plan.compute_s / fp8.compute_s == pytest.approx(peak.peak_tflops("fp8") / peak.peak_tflops("bf16"))


def test_shape_options_count_a_llama_shaped_model():
    # Llama-2 7B's shape: 32 x 4096, SwiGLU FFN of 11008, vocabulary 32000: 6.74 B parameters less the untied head
    llama = Architecture(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated_mlp=True)
    assert llama.parameters() == pytest.approx(6.74e9 - 32000 * 4096, rel=0.005)
    gqa = replace(llama, kv_heads=8)
    assert gqa.parameters() < llama.parameters()  # K and V shrink with grouped-query attention


def _states(job):
    b = memory_per_module(job)
    return b.weights_bytes + b.gradients_bytes + b.optimizer_bytes


def test_deepspeed_zero2_estimator_is_reproduced():
    psi = 7e9
    paper = _states(Job(psi, zero=2, dp=8))
    deepspeed = _states(Job(psi, zero=2, dp=8, accounting="deepspeed"))
    assert paper == pytest.approx(2 * psi + 14 * psi / 8)  # 26.25 GB: the paper's ideal
    assert deepspeed == pytest.approx(4 * psi + 16 * psi / 8)  # 42 GB: estimate_zero2_model_states_mem_needs
    assert deepspeed / GB == pytest.approx(42.0)
    offloaded = _states(Job(psi, zero=2, dp=8, accounting="deepspeed", offload_optimizer=True))
    assert offloaded == pytest.approx(2 * psi)  # cpu_offload=True: the 16-bit weights only


def test_deepspeed_zero3_estimator_is_reproduced():
    arch = Architecture(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated_mlp=True)
    psi = float(arch.parameters())
    largest = 32000 * 4096  # the embedding is the largest single module
    job = Job(psi, zero=3, dp=8, arch=arch, accounting="deepspeed")
    assert _states(job) == pytest.approx(18 * psi / 8 + 4 * largest)
    offloaded = replace(job, offload_optimizer=True)  # optimizer offloaded, parameters not
    assert _states(offloaded) == pytest.approx(2 * psi / 8 + 4 * largest)
    with pytest.raises(PlanError, match="largest layer"):
        memory_per_module(Job(psi, zero=3, dp=8, accounting="deepspeed"))


def test_plan_memory_accounting_flag_and_named_allowances(capsys):
    code = main(["plan", "memory", "--params", "7B", "--zero", "2", "--dp", "8", "--accounting", "deepspeed",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["accounting"] == "deepspeed"
    b = out["breakdown"]
    assert (b["weights_bytes"] + b["gradients_bytes"] + b["optimizer_bytes"]) / GB == pytest.approx(42.0)
    assert sum(out["allowances"].values()) == pytest.approx(b["communication_bytes"] + b["runtime_bytes"])
    assert any("1.5 GiB" in k or "runtime" in k for k in out["allowances"])
    code = main(["plan", "memory", "--params", "7B", "--zero", "2", "--dp", "8", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["accounting"] == "paper"  # the default: as before
    code = main(["plan", "memory", "--params", "7B", "--accounting", "fsdp-ish"])
    assert code == 2 and "--accounting" in capsys.readouterr().err
