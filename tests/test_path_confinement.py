"""Paths from bench data stay inside their folder: absolute paths and '..' are refused with one line,
before the file system is asked, so no message tells whether an outside path exists."""

import json

import pytest
import yaml
from minibench import make_minibench
from test_loaders_glasshouse import make_folder

from memeval.audit import audit
from memeval.bench.io import confined, load_bench
from memeval.bench.loaders import import_bench
from memeval.cli import main
from memeval.errors import InputError


def _set_image(folder, value):
    p = folder / "glasshouse_v0.1_core.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines()]
    rows[0]["image"] = value
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("value", ["../../../secret.png", "/etc/hostname", "img/../../secret.png"])
def test_glasshouse_image_outside_the_folder_is_refused(tmp_path, capsys, value):
    (tmp_path / "secret.png").write_bytes(b"outside")
    (tmp_path / "gh").mkdir()
    src = make_folder(tmp_path / "gh" / "src")
    _set_image(src, value)
    out = tmp_path / "gh" / "bench"
    assert main(["import", "glasshouse", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "field 'image'" in err and "leaves the folder" in err
    assert not out.exists() and sorted(p.name for p in out.parent.iterdir()) == ["src"]


def test_glasshouse_image_link_leading_out_is_refused(tmp_path):
    (tmp_path / "secret.png").write_bytes(b"outside")
    src = make_folder(tmp_path / "src")
    (src / "img" / "link.png").symlink_to(tmp_path / "secret.png")
    _set_image(src, "img/link.png")
    with pytest.raises(InputError, match="leads out of the folder"):
        import_bench("glasshouse", [src], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_pair_file_outside_the_folder_is_refused(tmp_path):
    src = make_folder(tmp_path / "src")
    (tmp_path / "q.jsonl").write_text((src / "questions_core.jsonl").read_text())
    with pytest.raises(InputError, match="leaves the folder"):
        import_bench("glasshouse", [src], tmp_path / "out", pairs={"../q.jsonl": ["core"]})


def _edit_manifest(bench, **tier0):
    meta = yaml.safe_load((bench / "bench.yaml").read_text())
    meta["tiers"][0].update(tier0)
    (bench / "bench.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))


@pytest.mark.parametrize(
    "edit, field",
    [
        ({"turns": "../outside.jsonl"}, "turns"),
        ({"questions": "/etc/hostname"}, "questions"),
        ({"name": ".."}, "name"),
        ({"name": "../../escaped"}, "name"),
        ({"question_sets": {"../../probes": "questions_core.jsonl"}}, "question_sets"),
    ],
)
def test_pad_never_writes_outside_out(tmp_path, capsys, edit, field):
    bench = tmp_path / "work" / "bench"
    bench.mkdir(parents=True)
    make_minibench(bench)
    (tmp_path / "work" / "outside.jsonl").write_text((bench / "turns_core.jsonl").read_text())
    _edit_manifest(bench, **edit)
    out = tmp_path / "work" / "padded"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["pad", str(bench), "--sizes", "40", "--source", "lifelog", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"field '{field}'" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_audit_does_not_tell_whether_an_outside_path_exists(tmp_path):
    """The same answer for an outside file that exists and one that does not."""
    (tmp_path / "exists.png").write_bytes(b"x")
    msgs = []
    for target in (tmp_path / "exists.png", tmp_path / "absent.png"):
        bench = tmp_path / f"b-{target.stem}"
        bench.mkdir()
        make_minibench(bench)
        _edit_manifest(bench, turns=str(target))
        with pytest.raises(InputError) as e:
            audit(bench)
        msgs.append(str(e.value).replace(str(bench), "B").replace(target.stem, "T"))
    assert msgs[0] == msgs[1] and "leaves the folder" in msgs[0]

    findings = []
    for target in ("/etc/hostname", "/no/such/file.png", "../exists.png"):
        bench = tmp_path / f"img-{len(findings)}"
        bench.mkdir()
        make_minibench(bench)
        p = bench / "turns_core.jsonl"
        rows = [json.loads(x) for x in p.read_text().splitlines()]
        rows[0]["image"] = target
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        meta = yaml.safe_load((bench / "bench.yaml").read_text())
        meta["tiers"] = meta["tiers"][:1]
        (bench / "bench.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        report = audit(bench)
        text = report.summary()
        findings.append([line.replace(repr(target), "T") for line in text.splitlines() if repr(target) in line])
    assert findings[0] and findings[0] == findings[1] == findings[2]
    assert "outside the bench folder" in findings[0][0] and "not read" in findings[0][0]


def test_confined_accepts_plain_relative_paths(tmp_path):
    (tmp_path / "img").mkdir()
    assert confined(tmp_path, "img/a.png", "f") == tmp_path / "img" / "a.png"
    assert confined(tmp_path, "a..b.png", "f") == tmp_path / "a..b.png"  # '..' only as a whole part
    for bad in ("", "/abs", "..", "a/../../b", "C:/x", "a\\..\\..\\b"):
        with pytest.raises(InputError):
            confined(tmp_path, bad, "f")
    (tmp_path / "mb").mkdir()
    assert load_bench(make_minibench(tmp_path / "mb")).name == "mini"
