"""Issue 46 (REV68a): gpu_driver_oops has one action, the knowledge base's (faults.yaml): the kernel message table
doctor reads its fix from (kernel_messages.yaml) says the same words."""

from __future__ import annotations

from gpuvet.captures.kernel_messages import kernel_message_catalog
from gpuvet.knowledge import fault


def test_the_oops_action_is_the_knowledge_bases() -> None:
    assert kernel_message_catalog()["gpu_driver_oops"].action == fault("gpu_driver_oops").action
