"""Wire shapes of the benchmark hub (camelCase): run uploads, stored runs, benchmark records
(the answers of its reads are in :mod:`.answers`).

:class:`RunUpload` is the body of ``POST /v1/runs``; the ``bench push`` command builds it from job
directories. Every model refuses unknown fields, non-finite numbers and empty identifiers, so a
payload that validates here is one the service can store as it is.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, NotRequired

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SkipValidation,
    TypeAdapter,
    ValidationError,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict

FiniteFloat = Annotated[float, Field(strict=True, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Text = Annotated[str, Field(min_length=1, max_length=300)]
SLUG_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
Slug = Annotated[str, Field(pattern=SLUG_PATTERN, examples=["gsm8k"])]
HttpUrlText = Annotated[str, Field(pattern=r"^https?://\S+$", max_length=2000)]
MAX_TRIALS = 20_000
MAX_REWARD_KEYS = 32
RewardKey = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^\S+$")]


class WireModel(BaseModel):
    """Inputs: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class NameVersion(WireModel):
    name: Text = Field(examples=["oracle"])
    version: str = Field(default="", max_length=100, examples=["1.0.0"])


class DatasetRef(WireModel):
    """Which rows were run: runs of different revisions are never pooled."""

    ref: Text = Field(description="Dataset id, Harbor reference or harness name.", examples=["openai/gsm8k"])
    revision: str | None = Field(default=None, max_length=100, description="Dataset revision (commit or tag).",
                                 examples=["main"])
    seed: int | None = Field(default=None, strict=True, ge=-(2**63), le=2**63 - 1,
                             description="Seed `bench pull` sampled the rows with, when it sampled.", examples=[7])
    rowIds: list[Annotated[str, Field(min_length=1, max_length=300)]] | None = Field(
        default=None, max_length=MAX_TRIALS, description="Ids of the dataset rows pulled, in pull order.",
        examples=[["gsm8k-0042", "gsm8k-0107"]])


# Trials are validated into plain dicts (TypedDicts), not model instances: a 10,000-trial upload
# then allocates a few objects per trial, which keeps the garbage collector out of the way.


@with_config(ConfigDict(extra="forbid"))
class TokenCounts(TypedDict):
    input: Annotated[int, Field(ge=0, strict=True)]
    output: Annotated[int, Field(ge=0, strict=True)]


@with_config(ConfigDict(extra="forbid"))
class TrialUpload(TypedDict):
    """One attempt of one task, counted as Harbor counts it: a trial without rewards (it errored
    before the verifier wrote any) counts 0 for every key, and still counts in ``nErrors``; a
    verifier's empty reward (``{}``) counts 0 for every key too, and is no error. A trial needs
    rewards or an error; ``finishedAt`` may not be before ``startedAt``."""

    taskId: Annotated[Text, Field(examples=["gsm8k-0042"])]
    trialName: Annotated[Text, Field(examples=["gsm8k-0042__a1b2c3"])]
    rewards: NotRequired[Annotated[dict[RewardKey, FiniteFloat] | None, Field(
        max_length=MAX_REWARD_KEYS,
        description="Verifier rewards, every key kept (reward.txt gives `reward`; reward.json any keys). "
                    "Absent or null for a trial that errored before the verifier wrote any; {} when the "
                    "verifier wrote a reward without keys (Harbor counts it in n_trials, as 0, with no pass@k).",
        examples=[{"reward": 1.0}, {"accuracy": 1.0, "latency_ok": 0.0}],
    )]]
    error: NotRequired[Annotated[str | None, Field(max_length=10_000,
                                                   description="Why the trial failed (exception type and message).")]]
    startedAt: NotRequired[datetime | None]
    finishedAt: NotRequired[datetime | None]
    tokens: NotRequired[TokenCounts | None]
    costUsd: NotRequired[NonNegativeFloat | None]


TRIAL_CHUNK = 256
_TRIAL_CHUNKS: TypeAdapter[list[TrialUpload]] = TypeAdapter(list[TrialUpload])
_MAX_PROBLEMS = 5


def trial_problems(trials: list[Any]) -> list[str]:
    """Validate raw trials chunk by chunk and check them across the upload (unique names, rewards or
    an error, times in order). The validated copies are dropped chunk by chunk: a large upload keeps
    only its parsed JSON alive, which keeps the garbage collector's full passes away."""
    problems: list[str] = []
    seen: set[str] = set()
    for offset in range(0, len(trials), TRIAL_CHUNK):
        try:
            chunk = _TRIAL_CHUNKS.validate_python(trials[offset:offset + TRIAL_CHUNK])
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                index, *where = error["loc"]
                problems.append(".".join(str(part) for part in ("trials", offset + int(index), *where))
                                + f": {error['msg']}")
            if len(problems) >= _MAX_PROBLEMS:
                break
            continue
        for index, trial in enumerate(chunk, start=offset):
            name = trial["trialName"]
            if name in seen:
                problems.append(f"trials.{index}: trialName {name!r} appears more than once")
            seen.add(name)
            if trial.get("rewards") is None and not trial.get("error"):
                problems.append(f"trials.{index}: a trial needs rewards, or an error saying why it has none")
            started, finished = trial.get("startedAt"), trial.get("finishedAt")
            if started and finished and finished < started:
                problems.append(f"trials.{index}: finishedAt is before startedAt")
    return problems


class RunSource(WireModel):
    """Where the trials were read from (DESIGN.md section 16)."""

    format: Literal["harbor", "inspect", "lm-eval", "every-eval-ever"] = Field(examples=["inspect"])
    tool: str = Field(default="", max_length=100, description="The harness that wrote the file.",
                      examples=["inspect_ai"])
    version: str = Field(default="", max_length=100, examples=["0.3.285"])


class ClaimUpload(WireModel):
    """A published score for this model on this benchmark, to be checked against the trials."""

    value: FiniteFloat = Field(examples=[0.92])
    sourceUrl: HttpUrlText = Field(examples=["https://example.org/model-card"])


class RunUpload(WireModel):
    """The body of ``POST /v1/runs`` (DESIGN.md section 8)."""

    benchmark: Slug
    model: Text = Field(examples=["anthropic/claude-sonnet-4-5"])
    agent: NameVersion
    harness: NameVersion
    dataset: DatasetRef
    # Items are checked by trial_problems (in chunks) and kept as sent.
    trials: list[SkipValidation[TrialUpload]] = Field(min_length=1, max_length=MAX_TRIALS)
    claim: ClaimUpload | None = None
    source: RunSource | None = Field(default=None, description="The file the trials were imported from; "
                                     "absent for Harbor jobs.")
    primaryMetric: RewardKey | None = Field(
        default=None, description="The reward key `score` is the mean of (`bench push --metric KEY`). Default: "
        "the benchmark's metric name when the trials carry it, else `reward`, else the only key.",
        examples=["reward"])
    bundleSha256: str = Field(pattern=r"^[0-9a-f]{64}$",
                              description="sha256 of the uploaded job bundle; the same bundle is stored once.")

    @model_validator(mode="after")
    def _coherent_trials(self) -> RunUpload:
        problems = trial_problems(self.trials)
        if problems:
            more = len(problems) - _MAX_PROBLEMS
            raise ValueError("; ".join(problems[:_MAX_PROBLEMS]) + (f"; and {more} more" if more > 0 else ""))
        return self


# Stored runs --------------------------------------------------------------------------------------


class Interval(BaseModel):
    low: float
    high: float


class Submitter(BaseModel):
    id: str = Field(description="usr_... for an account; anon_<hash> for an anonymous address.")
    kind: Literal["user", "anonymous"]
    displayName: str | None


class Retraction(BaseModel):
    reason: str
    retractedAt: str


class ClaimOut(BaseModel):
    value: float
    sourceUrl: str


class RunOut(BaseModel):
    """A stored run. Immutable, except that an admin may retract it (the reason stays visible)."""

    id: str = Field(examples=["run_01jd2k3m4n5p6q7r8s9t0v1w2x"])
    benchmark: str
    model: str
    modelKey: str = Field(description="The normalised model name runs and claims are matched on.")
    agent: NameVersion
    harness: NameVersion
    dataset: DatasetRef
    calibration: bool = Field(description="The agent is a reference agent (`oracle`, `nop`): a harness check, "
                                          "never ranked.")
    primaryMetric: str = Field(description="The reward key `score` is the mean of.", examples=["reward"])
    metrics: dict[str, float] = Field(description="Harbor's mean of every reward key over every trial (a trial "
                                                  "lacking a key counts 0).", examples=[{"reward": 0.75}])
    passAtK: dict[str, float] = Field(description="Harbor's pass@k by k; empty unless rewards are single-key 0/1 "
                                                  "and every task has at least two attempts.",
                                      examples=[{"2": 0.8, "4": 0.9}])
    score: float | None = Field(description="`metrics[primaryMetric]`: Harbor's mean over every trial.")
    stderr: float | None = Field(description="Standard error of the score, clustered by task.")
    ci95: Interval | None = Field(description="Jeffreys 95% interval on the metric's range (docs/benchhub.md).")
    nTasks: int
    nTrials: int = Field(description="Harbor's n_trials: the trials whose verifier gave rewards ({} included); "
                                     "a trial that errored before its verifier wrote any is not counted.")
    nTrialsTotal: int = Field(description="Every trial uploaded: the denominator of the means.")
    nErrors: int = Field(description="Harbor's n_errors: the trials that carry an error, rewarded or not.")
    claim: ClaimOut | None
    source: RunSource = Field(description="Where the trials were read from; `harbor` for runs stored before imports.")
    bundleSha256: str
    submitter: Submitter
    createdAt: str
    retracted: bool
    retraction: Retraction | None


class Usage(BaseModel):
    """Token and cost totals over the trials that carry them (null when none does)."""

    inputTokens: int | None
    outputTokens: int | None
    costUsd: float | None


class RunDetail(RunOut):
    trials: list[dict[str, Any]]
    usage: Usage


class RunUploadResult(BaseModel):
    run: RunOut
    duplicate: bool = Field(description="True when this bundle was uploaded before; `run` is the stored one.")


class RetractBody(WireModel):
    reason: str = Field(min_length=3, max_length=2000)


# Benchmark records (the JSON Schema in data/registry.schema.json is the full format) --------------


class Metric(WireModel):
    name: str = Field(examples=["accuracy"])
    higherIsBetter: bool
    min: float
    max: float


class Tolerance(WireModel):
    abs: float = Field(ge=0, description="Smallest claim-measurement difference still counted as agreement.")


class ReferenceScore(WireModel):
    model: str
    value: float
    sourceUrl: str
    date: str = Field(examples=["2023-03-15"])
    stderr: float | None = None
    note: str | None = None


class HfRowsAdapter(WireModel):
    kind: Literal["hf_rows"]
    dataset: str = Field(examples=["openai/gsm8k"])
    config: str | None = Field(examples=["main"])
    split: str = Field(examples=["test"])
    revision: str = Field(examples=["main"])
    gated: bool | None = None
    fields: dict[str, str | None] = Field(examples=[{"id": None, "input": "question", "target": "answer"}])
    verifier: dict[str, Any] = Field(examples=[{"kind": "numeric", "targetPattern": "####\\s*(.+)$"}])


class HarborNativeAdapter(WireModel):
    kind: Literal["harbor_native"]
    ref: str = Field(examples=["terminal-bench@2.0"])


class ExternalHarnessAdapter(WireModel):
    kind: Literal["external_harness"]
    harness: str
    url: str
    instructions: str


class HarborSection(WireModel):
    adapter: Annotated[HfRowsAdapter | HarborNativeAdapter | ExternalHarnessAdapter, Field(discriminator="kind")]


class BenchmarkRecord(WireModel):
    """A registry record (DESIGN.md section 8); also the body of the admin upsert."""

    slug: Slug
    name: str
    version: str
    description: str
    tags: list[str]
    homepage: str | None = Field(description="The benchmark's own page; null when it has none (shipped rows).")
    license: str | None
    metric: Metric
    tolerance: Tolerance
    reproducible: bool
    aliases: list[str] = Field(default=[], description="Task names other harnesses give this benchmark "
                               "(Inspect's `inspect_evals/gsm8k`, lm-eval's `gsm8k`): imports land on it.")
    size: int | None = Field(default=None, ge=1, description="Number of tasks in the split run (for coverage).",
                             examples=[1319])
    referenceScores: list[ReferenceScore]
    harbor: HarborSection


class RegistryIndex(BaseModel):
    """``/benchhub/index.json``: the whole registry as one static document."""

    schemaVersion: str = Field(examples=["1.0"])
    generatedAt: str
    sha256: str = Field(description="sha256 of the canonical JSON of `records` (also the ETag).")
    records: list[BenchmarkRecord]
