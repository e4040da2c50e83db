"""``memeval audit`` on image fields it cannot open: data: URLs, remote links, absolute and '..' paths
are counted or reported, never a traceback."""

import base64

from memeval.bench import load_bench, read_turns, write_turns
from memeval.audit import audit
from memeval.cli import main
from dataclasses import replace

from minibench import make_minibench


def test_audit_counts_and_reports_images_it_cannot_open(tmp_path, capsys):
    root = tmp_path / "b"
    make_minibench(root, filler=(0, 0))
    b = load_bench(root)
    tier = b.tier("core")
    turns = read_turns(root / tier.turns_file)
    data_url = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + b"x" * 3000).decode()
    refs = [data_url, "https://example.org/a.jpg", "/etc/passwd", "../outside.png"]
    turns = [replace(t, image=refs[i]) if i < len(refs) else t for i, t in enumerate(turns)]
    write_turns(root / tier.turns_file, turns)
    for t in b.tiers[1:]:
        write_turns(
            root / t.turns_file,
            [replace(x, image=refs[i]) if i < len(refs) else x for i, x in enumerate(read_turns(root / t.turns_file))],
        )
    report = audit(root)
    nums = report.check("images-resolve").numbers
    assert nums["data_url_images_not_checked"] >= 1 and nums["remote_images_not_checked"] >= 1
    assert nums["paths_outside_bench"] >= 2
    reasons = [f.reason for f in report.findings if f.check == "images-resolve"]
    assert any("'/etc/passwd' is outside the bench folder" in r for r in reasons)
    assert any("'../outside.png' is outside the bench folder" in r for r in reasons)
    # from the command line: a clear report and a non-zero exit, never a traceback
    code = main(["audit", str(root)])
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in out + err and "File name too long" not in out + err
