"""Wire shapes of the benchmark hub's reads (camelCase): measurements, reproduced results,
leaderboards and comparisons. Uploads, stored runs and records are in :mod:`.schemas`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bountyboard.benchhub.schemas import Interval, Metric


class Coverage(BaseModel):
    tasks: int = Field(description="Tasks measured.")
    size: int | None = Field(description="Tasks in the benchmark, when the registry records it.")
    fraction: float | None = Field(description="tasks / size")


class Measurement(BaseModel):
    """The non-retracted runs of one model with one agent on one dataset revision, pooled by task."""

    agent: str = Field(description="The agent's name: runs of any of its versions are pooled.", examples=["command"])
    calibration: bool = Field(description="A reference agent (`oracle`, `nop`): a harness check, never ranked.")
    datasetRevision: str | None = Field(description="The dataset revision the pooled runs share (runs of different "
                                                    "revisions are never pooled); null when the runs named none.",
                                        examples=["main"])
    datasetRefs: list[str] = Field(description="The dataset references the pooled runs named.",
                                   examples=[["openai/gsm8k"]])
    primaryMetric: str = Field(description="The reward key `mean` is the mean of.", examples=["reward"])
    mean: float | None = Field(description="Harbor's mean of the primary metric over every pooled trial.")
    stderr: float | None = Field(description="Standard error, clustered by task.")
    ci95: Interval | None = Field(description="Jeffreys 95% interval with the task-clustered effective size, widened "
                                              "for an estimated spread; the whole range below 6 such tasks.")
    ci90: Interval | None = Field(description="The 90% interval the equivalence test (TOST at 5%) uses (the whole "
                                              "range below 5 tasks of estimated spread).")
    effectiveTasks: float | None = Field(description="Independent pass/fail observations worth as much.")
    metrics: dict[str, float] = Field(examples=[{"reward": 0.75}])
    coverage: Coverage
    nTasks: int = Field(description="Tasks with at least one pooled trial.", examples=[30])
    nTrials: int = Field(description="Every pooled trial, errored ones included: the denominator of `mean` and "
                                     "`metrics` (the runs' `nTrialsTotal`, summed).", examples=[90])
    nErrors: int = Field(description="Pooled trials that carry an error, rewarded or not (the runs' `nErrors`, "
                                     "summed).", examples=[2])
    runs: int = Field(description="Runs pooled, anonymous ones included.", examples=[3])
    anonymousRuns: int = Field(description="Runs uploaded without an account.")
    submitters: int = Field(description="Accounts among the uploaders (one account is one submitter); anonymous "
                                        "runs add none.")
    lastRunAt: str = Field(description="When the latest pooled run was uploaded.")


class ReproducedMeasurement(Measurement):
    basis: Literal["independent", "claimant", "anonymous"] = Field(
        description="Whose runs: keyed submitters other than the claimant (`independent`; every keyed submitter "
                    "when nothing is claimed), the claimant's own, or anonymous uploads.")


class Claimant(BaseModel):
    kind: Literal["registry", "user", "anonymous"] = Field(
        description="The registry's reference score (its source is `claim.sourceUrl`), or the uploader of the run "
                    "that carried the claim.")
    id: str | None = Field(description="`usr_...` or `anon_...` for an uploader; null for the registry.")


class ClaimInfo(BaseModel):
    value: float
    sourceUrl: str
    date: str | None
    stderr: float | None
    origin: Literal["registry", "run"] = Field(description="A curated reference score, or the claim an upload carried.")


class Decision(BaseModel):
    band: Interval = Field(description="claim ± tolerance.abs, inside the metric's range")
    confidence: float = Field(description="Both decisions are tests at 1 - confidence.", examples=[0.95])
    extraTasksToDecide: int | None = Field(
        description="For an inconclusive result: how many more tasks, behaving like those measured, would make it "
                    "reproduced or discrepant (null when decided, or when no feasible number would).")


class ToleranceUsed(BaseModel):
    abs: float
    rule: str


ReproducedStatus = Literal["reproduced", "discrepant", "inconclusive", "self_reported", "runs_only", "claim_only",
                           "gap", "not_reproducible"]


class ReproducedItem(BaseModel):
    benchmark: str
    name: str
    kind: str
    status: ReproducedStatus
    reason: str
    claim: ClaimInfo | None
    claimant: Claimant | None = Field(description="Who made the claim.")
    independent: bool = Field(description="The status was decided on runs by keyed submitters other than the "
                                          "claimant.")
    measured: ReproducedMeasurement | None = Field(
        description="The measurement the status is decided on: the (agent, revision) with the most tasks among "
                    "independent runs, else the claimant's own, else anonymous ones; calibration agents never count.")
    otherMeasurements: list[ReproducedMeasurement] = Field(description="This model's other measurements.")
    runs: int
    submitters: int = Field(description="Accounts that uploaded runs (one account is one submitter, whatever its "
                                        "keys); anonymous runs add none.")
    delta: float | None = Field(description="measured mean - claim")
    decision: Decision | None
    tolerance: ToleranceUsed


class Gap(BaseModel):
    benchmark: str
    status: str
    reason: str
    command: str = Field(description="The bench commands that would fill this gap.")


class ReproducedAnswer(BaseModel):
    model: str
    modelKey: str
    includeAnonymous: bool
    toleranceRule: str
    summary: dict[str, int]
    data: list[ReproducedItem]
    gaps: list[Gap]


class RankRange(BaseModel):
    best: int = Field(description="1 + the entries of the same task set surely better (the rank).")
    worst: int = Field(description="The entries of the same task set, less those surely worse.")


class TaskSet(BaseModel):
    id: str = Field(description="Names the dataset revision and the task ids measured: entries are ranked only "
                                "against entries with the same id.", examples=["ts_3f9a0c2b7d1e4a56"])
    datasetRevision: str | None
    tasks: int


class LeaderboardEntry(Measurement):
    """A (model, agent) pair, headed by its dataset revision with the most tasks."""

    rank: int | None = Field(description="1 + the number of entries of the same task set whose 95% interval lies "
                                         "entirely on the better side of this one's: entries the data cannot order "
                                         "share a rank. Null for harness checks.")
    rankRange: RankRange | None = Field(description="The places this entry could take among its task set; null for "
                                                    "harness checks.")
    taskSet: TaskSet
    model: str
    modelKey: str
    datasetRevisions: list[str] = Field(description="Every dataset revision this pair was measured on (each a "
                                                    "separate pool).")


class Leaderboard(BaseModel):
    benchmark: str
    metric: Metric
    size: int | None = Field(description="Tasks in the benchmark, when known.")
    includeAnonymous: bool
    data: list[LeaderboardEntry] = Field(description="(Model, agent) pairs by task set (the most entries first), "
                                                     "then by rank.")
    harnessChecks: list[LeaderboardEntry] = Field(description="Runs of reference agents (`oracle`, `nop`): they "
                                                             "check the harness, never take a place.")


class ComparedMeasurement(BaseModel):
    model: str
    modelKey: str
    agent: str
    datasetRevision: str | None
    nTasks: int = Field(description="Tasks this measurement ran (the comparison uses those both ran).")


class Comparison(BaseModel):
    """``a`` minus ``b`` on the tasks both ran, each task weighing once (the mean of its attempts)."""

    benchmark: str
    a: ComparedMeasurement
    b: ComparedMeasurement
    sharedTasks: int = Field(description="Tasks both ran: the only ones compared.", examples=[5])
    meanA: float = Field(description="a's mean over the shared tasks.", examples=[0.6])
    meanB: float = Field(description="b's mean over the shared tasks.", examples=[0.4])
    difference: float = Field(description="meanA - meanB", examples=[0.2])
    se: float = Field(description="Standard error of the difference, clustered by task: the spread of the per-task "
                                  "differences.")
    interval: Interval = Field(description="95% interval of the difference (docs/benchhub.md, paired comparison).")
    pValue: float = Field(description="Two-sided p-value of no difference.")
    method: Literal["exact_mcnemar", "paired_t"] = Field(
        description="exact_mcnemar when both are one pass/fail attempt per shared task (the test's exact interval); "
                    "paired_t otherwise (n - 1 degrees of freedom, never stronger than a sign-flip test).")
