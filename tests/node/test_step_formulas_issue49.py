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
    # Llama-2 7B's shape: 32 x 4096, SwiGLU FFN of 11008, vocabulary 32000, its own output head: 6.74 B parameters
    llama = Architecture(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated_mlp=True, tied=False)
    assert llama.parameters() == pytest.approx(6.74e9, rel=0.005)
    assert replace(llama, tied=True).parameters() == llama.parameters() - 32000 * 4096  # a tied head: one matrix
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
    arch = Architecture(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated_mlp=True, tied=False)
    psi = float(arch.parameters())
    largest = 32000 * 4096  # the embedding (and the untied head, its equal) is the largest single module
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


# --accounting fsdp: PyTorch FSDP as implemented (torch.distributed.fsdp: ShardingStrategy, MixedPrecision,
# BackwardPrefetch.BACKWARD_PRE). A small shape keeps the hand arithmetic short: 4 blocks of 1024, vocabulary 32000.
SMALL = Architecture(layers=4, hidden=1024, heads=8)
BLOCK = 4 * 1024**2 + 2 * 1024 * 4096 + 4 * 1024  # attention, MLP, norms: 12,587,008
ROOT = 32000 * 1024 + 2 * 1024  # the embedding and the final LayerNorm, in the root unit: 32,770,048
PSI = 4 * BLOCK + ROOT  # 83,118,080


def _fsdp(zero, **kw):
    return memory_per_module(Job(float(SMALL.parameters()), zero=zero, dp=8, arch=SMALL, accounting="fsdp", **kw))


def test_fsdp_full_shard_holds_fp32_shards_plus_the_root_and_two_gathered_blocks():
    """FULL_SHARD (--zero 3), N = 8, bf16 with AdamW: weights 4Ψ/N + 2(R + 2B) = 41,559,040 + 115,888,128 =
    157,447,168; gradients 4Ψ/N + 2·max(R, B) = 41,559,040 + 65,540,096 = 107,099,136; optimizer 8Ψ/N =
    83,118,080 (the fp32 master is the sharded parameter, so AdamW adds only its two moments)."""
    assert SMALL.layer_parameters() == BLOCK == 12_587_008 and SMALL.parameters() == PSI == 83_118_080
    b = _fsdp(3)
    assert (b.weights_bytes, b.gradients_bytes, b.optimizer_bytes) == (157_447_168, 107_099_136, 83_118_080)
    assert b.state_allowances == {"FSDP gathered units (compute dtype)": 115_888_128,
                                  "FSDP unsharded gradient of one unit": 65_540_096}
    assert b.communication_bytes == 0  # FSDP's collectives run on the unit copies above
    assert any("FULL_SHARD" in n and "BACKWARD_PRE" not in n for n in b.assumptions)
    assert any("BACKWARD_PRE" in n for n in b.assumptions)


def test_fsdp_shard_grad_op_keeps_every_unit_gathered_and_zero1_maps_to_it():
    """SHARD_GRAD_OP (--zero 2; FSDP has no optimizer-only sharding, so --zero 1 too): weights 4Ψ/N + 2Ψ =
    41,559,040 + 166,236,160 = 207,795,200; gradients and optimizer as FULL_SHARD's (107,099,136 and 83,118,080)."""
    two, one = _fsdp(2), _fsdp(1)
    assert (two.weights_bytes, two.gradients_bytes, two.optimizer_bytes) == (207_795_200, 107_099_136, 83_118_080)
    assert (one.weights_bytes, one.gradients_bytes, one.optimizer_bytes) == (207_795_200, 107_099_136, 83_118_080)
    assert any("SHARD_GRAD_OP (--zero 1)" in n for n in one.assumptions)


def test_fsdp_no_shard_is_replicated_fp32_with_the_unit_copies():
    """NO_SHARD (--zero 0), bf16: weights 4Ψ + 2(R + 2B) = 332,472,320 + 115,888,128 = 448,360,448; gradients
    4Ψ + 2·max(R, B) = 398,012,416; optimizer 8Ψ = 664,944,640. In fp32 there is no low-precision copy:
    4Ψ, 4Ψ and 8Ψ with no allowance."""
    b = _fsdp(0)
    assert (b.weights_bytes, b.gradients_bytes, b.optimizer_bytes) == (448_360_448, 398_012_416, 664_944_640)
    fp32 = _fsdp(0, precision="fp32")
    assert (fp32.weights_bytes, fp32.gradients_bytes, fp32.optimizer_bytes) == (4 * PSI, 4 * PSI, 8 * PSI)
    assert sum(fp32.state_allowances.values()) == 0


def test_fsdp_on_a_llama_7b_shape_lies_between_the_paper_and_deepspeed():
    """Llama-2-7B's shape (untied head: the root unit R holds the embedding and the head, 2 × 131 M, more than
    a block B) on 8 ranks: SHARD_GRAD_OP 2Ψ + 16Ψ/N + 2·max(R, B) = 27.48 GB, between the paper's ZeRO-2
    (2Ψ + 14Ψ/N = 25.27 GB) and DeepSpeed's estimator (4Ψ + 16Ψ/N = 40.43 GB); FULL_SHARD 16Ψ/N + 2(R + 2B) +
    2·max(R, B) = 15.34 GB against the paper's 13.48."""
    llama = Architecture(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, gated_mlp=True, tied=False,
                         norm="rmsnorm")
    psi, block, root = float(llama.parameters()), llama.layer_parameters(), 2 * 32000 * 4096 + 4096  # + final norm
    assert psi == 6_738_415_616  # the checkpoint's count
    job = Job(psi, zero=2, dp=8, arch=llama, accounting="fsdp")
    assert _states(job) == pytest.approx(2 * psi + 16 * psi / 8 + 2 * max(root, block))
    assert _states(job) / GB == pytest.approx(27.48, abs=0.01)
    assert _states(replace(job, accounting="paper")) < _states(job) < _states(replace(job, accounting="deepspeed"))
    full = replace(job, zero=3)
    assert _states(full) == pytest.approx(16 * psi / 8 + 2 * (root + 2 * block) + 2 * max(root, block))
    assert _states(full) / GB == pytest.approx(15.34, abs=0.01)


def test_fsdp_needs_the_architecture_and_has_no_optimizer_only_offload():
    with pytest.raises(PlanError, match="architecture"):
        memory_per_module(Job(7e9, zero=3, dp=8, accounting="fsdp"))
    with pytest.raises(PlanError, match="CPUOffload"):
        memory_per_module(Job(7e9, zero=3, dp=8, arch=SMALL, accounting="fsdp", offload_optimizer=True))


def test_plan_memory_accounting_fsdp_cli(capsys):
    code = main(["plan", "memory", "--layers", "4", "--hidden", "1024", "--heads", "8", "--zero", "3", "--dp", "8",
                 "--accounting", "fsdp", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["accounting"] == "fsdp"
    b = out["breakdown"]
    assert (b["weights_bytes"], b["gradients_bytes"], b["optimizer_bytes"]) == (157_447_168, 107_099_136, 83_118_080)
    assert out["allowances"]["FSDP gathered units (compute dtype)"] == 115_888_128
    assert out["allowances"]["FSDP unsharded gradient of one unit"] == 65_540_096
    assert b["total_bytes"] == pytest.approx(sum(v for k, v in b.items() if k != "total_bytes"))
    code = main(["plan", "memory", "--layers", "4", "--hidden", "1024", "--heads", "8", "--zero", "3", "--dp", "8",
                 "--accounting", "fsdp"])
    text = capsys.readouterr().out
    assert code == 0 and "FULL_SHARD" in text and "BACKWARD_PRE" in text
    code = main(["plan", "memory", "--params", "7B", "--zero", "3", "--accounting", "fsdp"])
    err = capsys.readouterr().err
    assert code == 2 and "--accounting" in err and "--layers" in err
