"""Like-for-like comparisons: the one place that says whether runs set side by side are comparable.

:func:`compare_runs` takes the records of several runs (``aggregate.load_records``) and returns a
:class:`Comparison`: the records cut to the questions *every* run graded (per bench and tier: a
question only some systems graded -- an abstention question a memory-only system leaves ungraded, an
error -- is left out for all of them), how many each run graded on its own and why the rest was left
out, and the fairness lines to print before the comparison: k / context budget / reader / judge /
question set / categories counted / bench, what differs between the runs, and the systems whose
retrieval returns (nearly) the whole haystack. ``memeval summary``, ``memeval diff``, ``memeval
compare``, the compare notebook and the run browser all print these lines and compare over ``df``.

>>> import polars as pl
>>> df = pl.DataFrame({"run_id": ["a", "a", "b", "b"], "system": ["bm25", "bm25", "oracle", "oracle"],
...     "tier": ["core"] * 4, "qid": ["q1", "q2"] * 2, "axis": ["BASIC", "ABSTAIN"] * 2,
...     "score": [1.0, None, 1.0, 1.0], "ungraded_reason": [None, "no answer to abstain with", None, None],
...     "error": [None] * 4})
>>> c = compare_runs(df)
>>> c.df.height, c.graded_own, c.n_common
(2, {'bm25': 1, 'oracle': 2}, 1)
>>> print(c.left_out["oracle"])
1 graded question left out (not graded by bm25: 'no answer to abstain with' x1)
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from ..bench.io import load_bench
from ..errors import InputError
from ..run.folder import read_manifest
from ..systems.registry import HOUSEKEEPING  # the settings that say where, not what

__all__ = [
    "WHOLE_HAYSTACK",
    "RunTerms",
    "Comparison",
    "run_terms",
    "compare_runs",
    "fairness_lines",
    "with_own_counts",
]

#: a system returning at least this share of its haystack's turns (median over questions) is flagged
WHOLE_HAYSTACK = 0.8
#: the settings a comparison states, in the order the fairness line names them
TERMS = ("k", "search params", "context budget", "reader", "judge", "question set", "categories counted", "bench")
_NA = "-"


@dataclass(frozen=True)
class RunTerms:
    """What one run was measured with (from its manifest and records)."""

    system: str
    values: Mapping[str, str]
    axes: tuple[str, ...] = ()  # the categories (axes) it graded


@dataclass(frozen=True)
class Comparison:
    """Records cut to the questions every run graded, with what that left out and the fairness lines."""

    df: pl.DataFrame
    terms: tuple[RunTerms, ...]
    differ: tuple[str, ...]
    graded_own: Mapping[str, int]
    n_common: int
    left_out: Mapping[str, str] = field(default_factory=dict)
    whole_haystack: Mapping[str, float] = field(default_factory=dict)
    unchecked_haystack: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The fairness lines: the settings (shared ones once, differing ones per system), then what
        the equal-question cut left out, then the whole-haystack flags."""
        out = []
        shared = []
        for t in (t for t in TERMS if t not in self.differ and self.terms):
            have = [r.system for r in self.terms if r.values[t] != _NA]
            value = next((r.values[t] for r in self.terms if r.values[t] != _NA), _NA)
            only = f" ({', '.join(have)} only)" if have and len(have) < len(self.terms) else ""
            shared.append(f"{t} {value if value != _NA else 'n/a'}{only}")
        out.append("fairness: " + (" | ".join(shared) if shared else "no setting shared by every run"))
        for t in self.differ:
            if t == "categories counted":
                every = set.intersection(*(set(r.axes) for r in self.terms))
                per = "; ".join(
                    f"{r.system} also {', '.join(sorted(set(r.axes) - every))}"
                    for r in self.terms
                    if set(r.axes) - every
                )
                out.append(f"  DIFFERS between runs: categories counted (every run: {len(every)}; {per})")
                continue
            per = "; ".join(f"{r.system}: {r.values[t]}" for r in self.terms)
            out.append(f"  DIFFERS between runs: {t} ({per})")
        systems = len(self.graded_own)
        if systems > 1:
            counts = ", ".join(f"{s} {n}" for s, n in self.graded_own.items())
            out.append(
                f"  side by side over the {self.n_common} questions (counted per tier) every run graded (each run's own graded n: {counts})"
            )
            out.extend(f"  {s}: {why}" for s, why in self.left_out.items())
        for s, share in self.whole_haystack.items():
            out.append(
                f"  WARNING {s} returns (nearly) the whole haystack: median {share:.0%} of its turns (or of its "
                "characters, for a system returning no turn ids) per question; "
                "its score reads everything, not what it retrieved"
            )
        if self.unchecked_haystack:
            out.append(f"  haystack share not checked for {', '.join(self.unchecked_haystack)} (bench files not found)")
        return out


def _k_and_budget(config: Mapping[str, Any]) -> tuple[str, str]:
    params = (config.get("system") or {}).get("params") or {}
    k = str(params["k"]) if "k" in params else _NA
    budget = [f"{name}={params[name]}" for name in ("tokens", "max_tokens", "budget") if name in params]
    if config.get("context_max_tokens") is not None:
        budget.append(f"reader cap {config['context_max_tokens']}")
    return k, ", ".join(budget) or _NA


#: parameters that are neither k nor a budget nor housekeeping, yet change what a search returns
_NOT_SEARCH = frozenset({"k", "tokens", "max_tokens", "budget", "base_url", "url"})


def _search_params(config: Mapping[str, Any]) -> str:
    """A system's other search settings (threshold, mode, rerank, ...), as ``name=value`` sorted by name.

    >>> _search_params({"system": {"params": {"k": 10, "threshold": 0.0, "mode": "hybrid", "base_url": "u"}}})
    'mode=hybrid, threshold=0.0'
    """
    params = (config.get("system") or {}).get("params") or {}
    kept = sorted(f"{n}={v}" for n, v in params.items() if n not in _NOT_SEARCH and n not in HOUSEKEEPING)
    return ", ".join(kept) or _NA


def _model(identity: Mapping[str, Any] | None) -> str:
    if not identity:
        return _NA
    name = identity.get("model") or identity.get("name") or "?"
    prompt = identity.get("prompt")
    return f"{name} ({prompt})" if prompt else str(name)


def run_terms(manifest: Mapping[str, Any], graded_axes: Iterable[str], questions: str = "all") -> RunTerms:
    """A run's settings as the fairness line names them. ``graded_axes``: the axes it graded at least
    one question of; ``questions``: the summary's question filter (``all`` or ``core``)."""
    c = manifest.get("config") or {}
    grader = c.get("grader") or {}
    k, budget = _k_and_budget(c)
    if grader.get("name") == "judge":
        judge = "judge " + _model(grader.get("judge"))
    else:
        judge = f"{grader.get('name', '?')} rules ({grader.get('version', '?')})"
    if grader.get("errata"):
        judge += f", errata {grader['errata'].get('hash', '?')}"
    reader = _model(grader.get("reader")) if c.get("mode") == "answer" else f"none ({c.get('mode')} mode)"
    bench = c.get("bench") or {}
    axes = sorted(set(graded_axes))
    values = {
        "k": k,
        "search params": _search_params(c),
        "context budget": budget,
        "reader": reader,
        "judge": judge,
        "question set": f"{c.get('question_set') or 'main'}/{questions}",
        "categories counted": f"{len(axes)} ({', '.join(axes)})" if axes else "none",
        "bench": f"{bench.get('name')} {bench.get('version')} {str(bench.get('content_hash') or '')[7:19]}".strip(),
    }
    return RunTerms(
        str((c.get("system") or {}).get("label") or (c.get("system") or {}).get("spec")), values, tuple(axes)
    )


def _differ(terms: Sequence[RunTerms]) -> tuple[str, ...]:
    """Settings with more than one value among the runs they apply to (``-``, not applicable, is no value)."""
    out = []
    for t in TERMS:
        seen = {r.values[t] for r in terms if r.values[t] != _NA}
        if len(seen) > 1 or (t == "categories counted" and len({r.values[t] for r in terms}) > 1):
            out.append(t)
    return tuple(out)


@functools.lru_cache(maxsize=32)
def _haystack_sizes(root: str, turns_file: str, _mtime: int) -> dict[str | None, int]:
    """Turns per haystack of one turns file (None: the one haystack of a tier without the field)."""
    t = pl.read_ndjson(Path(root) / turns_file, schema={"haystack": pl.Utf8, "turn_id": pl.Int64})
    return {r["haystack"]: r["len"] for r in t.group_by("haystack").len().iter_rows(named=True)}


@functools.lru_cache(maxsize=32)
def _haystack_chars(root: str, turns_file: str, _mtime: int) -> dict[str | None, int]:
    """Characters of turn text per haystack of one turns file (the share a system without turn ids returns)."""
    t = pl.read_ndjson(Path(root) / turns_file, schema={"haystack": pl.Utf8, "text": pl.Utf8})
    agg = t.group_by("haystack").agg(pl.col("text").str.len_chars().sum().alias("n"))
    return {r["haystack"]: int(r["n"] or 0) for r in agg.iter_rows(named=True)}


def _chars_of(manifest: Mapping[str, Any]) -> dict[str, dict[str | None, int]] | None:
    """{tier: {haystack: characters}} read from the run's bench folder, or None when it cannot be read."""
    return _per_haystack(manifest, _haystack_chars)


def _sizes_of(manifest: Mapping[str, Any]) -> dict[str, dict[str | None, int]] | None:
    """{tier: {haystack: n turns}} read from the run's bench folder, or None when it cannot be read."""
    return _per_haystack(manifest, _haystack_sizes)


def _per_haystack(
    manifest: Mapping[str, Any], count: Callable[[str, str, int], dict[str | None, int]]
) -> dict[str, dict[str | None, int]] | None:
    """{tier: ``count(root, turns file, mtime)``} over the run's bench folder, or None when it cannot be read."""
    root = ((manifest.get("config") or {}).get("bench") or {}).get("root")
    if not root:
        return None
    try:
        bench = load_bench(root)
        return {
            t.name: count(str(root), t.turns_file, (Path(root) / t.turns_file).stat().st_mtime_ns) for t in bench.tiers
        }
    except (InputError, OSError, pl.exceptions.PolarsError, ValueError):
        return None


def _whole_haystack(
    df: pl.DataFrame, manifests: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, float], tuple[str, ...]]:
    flagged: dict[str, float] = {}
    unchecked: list[str] = []
    if "retrieved_turns" not in df.columns:
        return flagged, ()
    for run_id, system in df.select("run_id", "_label").unique(maintain_order=True).iter_rows():
        d = df.filter(
            (pl.col("run_id") == run_id) & pl.col("error").is_null() & pl.col("retrieved_turns").is_not_null()
        )
        if not d.height:  # no turn ids (a hosted API returns rewritten facts): the share of characters
            share_c, known = _chars_share(df, run_id, manifests.get(run_id) or {})
            if not known:
                unchecked.append(str(system))
            elif share_c is not None and share_c >= WHOLE_HAYSTACK:
                flagged[str(system)] = share_c
            continue
        sizes = _sizes_of(manifests.get(run_id) or {})
        if sizes is None:
            unchecked.append(str(system))
            continue
        hay = d["haystack"] if "haystack" in d.columns else pl.Series([None] * d.height)
        shares = [
            len(ids) / n
            for tier, h, ids in zip(d["tier"], hay, d["retrieved_turns"])
            if (n := sizes.get(tier, {}).get(h)) and ids is not None
        ]
        if shares:
            share = sorted(shares)[len(shares) // 2]
            if share >= WHOLE_HAYSTACK:
                flagged[str(system)] = share
    return flagged, tuple(unchecked)


def _has_chars(df: pl.DataFrame, run_id: str) -> bool:
    return "chars_returned" in df.columns and bool(
        df.filter((pl.col("run_id") == run_id) & pl.col("chars_returned").is_not_null()).height
    )


def _chars_share(df: pl.DataFrame, run_id: str, manifest: Mapping[str, Any]) -> tuple[float | None, bool]:
    """The median share of its haystack's characters a run returned per answered question, and whether
    the bench could be read (a run without ``chars_returned``: (None, True), nothing to check)."""
    if not _has_chars(df, run_id):
        return None, True
    chars = _chars_of(manifest)
    if chars is None:
        return None, False
    d = df.filter((pl.col("run_id") == run_id) & pl.col("error").is_null() & pl.col("chars_returned").is_not_null())
    hay = d["haystack"] if "haystack" in d.columns else pl.Series([None] * d.height)
    shares = sorted(
        c / n for tier, h, c in zip(d["tier"], hay, d["chars_returned"]) if (n := chars.get(tier, {}).get(h))
    )
    return (shares[len(shares) // 2] if shares else None), True


def _left_out(df: pl.DataFrame, common: pl.DataFrame, keys: list[str]) -> dict[str, str]:
    """Per run with graded questions outside the common set: how many, and why the others did not grade them."""
    graded = df.filter(pl.col("score").is_not_null())
    out: dict[str, str] = {}
    for run_id, system in df.select("run_id", "_label").unique(maintain_order=True).iter_rows():
        mine = graded.filter(pl.col("run_id") == run_id).select(keys).unique()
        extra = mine.join(common, on=keys, how="anti")
        if not extra.height:
            continue
        others = df.filter((pl.col("run_id") != run_id) & pl.col("score").is_null()).join(extra, on=keys, how="semi")
        why: dict[str, Counter] = {}  # reason -> {system: questions}
        for r in others.iter_rows(named=True):
            reason = r.get("ungraded_reason") or (f"error: {r['error']}" if r.get("error") else "not asked")
            why.setdefault(str(reason)[:70], Counter())[str(r["_label"])] += 1
        ranked = sorted(why.items(), key=lambda kv: -max(kv[1].values()))[:3]
        detail = "; ".join(f"not graded by {', '.join(c)}: {reason!r} x{max(c.values())}" for reason, c in ranked)
        plural = "s" if extra.height != 1 else ""
        out[str(system)] = f"{extra.height} graded question{plural} left out ({detail or 'not asked of every run'})"
    return out


def compare_runs(
    df: pl.DataFrame,
    run_dirs: Sequence[str | Path] = (),
    questions: str = "all",
    manifests: Mapping[str, Mapping[str, Any]] | None = None,
) -> Comparison:
    """The like-for-like view of the runs in ``df`` (records of one or more runs; ``run_dirs``: their
    folders, for the manifests -- without them the settings read as unknown and the haystack is not
    checked). Runs on different benches or question sets are cut separately (each bench with its own
    common questions); within one, a question stays only where every run covering its tier graded it."""
    if manifests is None:
        manifests = {}
        for folder in run_dirs:
            m = read_manifest(folder)
            manifests[str(m.get("run_id", Path(folder).name))] = m
    group_of = {
        rid: f"{(m.get('config') or {}).get('bench', {}).get('content_hash')}|{(m.get('config') or {}).get('question_set')}"
        for rid, m in manifests.items()
    }
    pairs = df.select("run_id", "system").unique(maintain_order=True).rows()
    n_of = Counter(str(s) for _, s in pairs)  # a system run twice is named by its run too
    label_of = {rid: str(s) if n_of[str(s)] == 1 else f"{s} [{rid}]" for rid, s in pairs}
    d = df.with_columns(
        pl.col("run_id").replace_strict(group_of, default="?", return_dtype=pl.Utf8).alias("_group"),
        pl.col("run_id").replace_strict(label_of, return_dtype=pl.Utf8).alias("_label"),
    )
    keys = ["_group", "tier", "qid"]
    graded = d.filter(pl.col("score").is_not_null())
    runs_per_tier = d.select("_group", "tier", "run_id").unique().group_by("_group", "tier").len("_runs")
    common = (
        graded.select(*keys, "run_id")
        .unique()
        .group_by(keys)
        .len("_n")
        .join(runs_per_tier, on=["_group", "tier"])
        .filter(pl.col("_n") == pl.col("_runs"))
        .select(keys)
    )
    cut = d.join(common, on=keys, how="semi")
    graded_own = {str(s): int(n) for s, n in graded.group_by("_label").len().sort("_label").iter_rows()}
    for s in label_of.values():
        graded_own.setdefault(s, 0)
    terms = []
    for run_id, system in label_of.items():
        axes = graded.filter(pl.col("run_id") == run_id)["axis"].unique().to_list()
        man = manifests.get(run_id)
        t = run_terms(man, axes, questions) if man else RunTerms(str(system), {k: "unknown" for k in TERMS})
        terms.append(RunTerms(str(system), t.values, tuple(sorted(axes))))
    whole, unchecked = _whole_haystack(d, manifests)
    return Comparison(
        df=cut.drop("_group", "_label").filter(pl.col("score").is_not_null()),
        terms=tuple(terms),
        differ=_differ(terms),
        graded_own=graded_own,
        n_common=common.height,
        left_out=_left_out(d, common, keys),
        whole_haystack=whole,
        unchecked_haystack=unchecked,
    )


def fairness_lines(df: pl.DataFrame, run_dirs: Sequence[str | Path] = (), questions: str = "all") -> list[str]:
    """Just the fairness lines of :func:`compare_runs`."""
    return compare_runs(df, run_dirs, questions).lines()


def with_own_counts(table: pl.DataFrame, df: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """``table`` (computed on :attr:`Comparison.df`, where ``graded`` is the common graded n) with each
    row's own counts from all its records ``df``: ``graded_own`` (what it graded by itself), and
    ``ungraded``/``errors`` over everything it was asked -- a cut never hides an error."""
    own = df.group_by(*by).agg(
        pl.col("score").is_not_null().sum().alias("graded_own"),
        pl.col("ungraded_reason").is_not_null().sum().alias("ungraded"),
        pl.col("error").is_not_null().sum().alias("errors"),
        pl.col("ungraded_reason").str.starts_with("dropped by errata").sum().alias("errata_dropped"),
    )
    if not own["errata_dropped"].sum():
        own = own.drop("errata_dropped")
    t = table.drop([c for c in ("graded_own", "ungraded", "errors", "errata_dropped") if c in table.columns])
    t = t.join(own, on=list(by), how="full", coalesce=True).sort(list(by), nulls_last=True)
    lead = [c for c in table.columns if c in t.columns and c not in ("ungraded", "errors", "errata_dropped")]
    anchor = "graded" if "graded" in lead else "n"  # own counts right after the common graded n
    if anchor in lead:
        i = lead.index(anchor) + 1
        lead[i:i] = ["graded_own", "errors", "ungraded"]
    return t.select(*lead, *[c for c in t.columns if c not in lead])
