"""Which way is worse for a check's figure: one rule for baselines, run comparisons and fleet
peers. A module of its own with no imports, so the fleet merge need not load the logbook's
pydantic records to learn it (~18 ms of its start)."""

LOWER_IS_BETTER = ("_latency",)  # name suffixes where a smaller value is better


def lower_is_better(name: str) -> bool:
    return name.endswith(LOWER_IS_BETTER)
