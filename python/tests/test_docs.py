"""docs/PYTHON.md's examples run as written: every ```python block, in
order, in one namespace, in an empty folder; each `print(...)  # out`
line's output must be what its comment (and the comment lines under it)
says."""
import contextlib
import io
import os
import re

from conftest import ROOT


def blocks():
    with open(os.path.join(ROOT, "docs", "PYTHON.md"), encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def expected_outputs(code):
    """Per print line with a '# ...' comment: its expected output lines."""
    lines, out = code.splitlines(), []
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)print\(.*\)\s+# (.*)$", line)
        if not m:
            continue
        want = [m.group(2)]
        col = line.index("# ")
        for nxt in lines[i + 1:]:
            if len(nxt) > col and nxt[:col].strip() == "" and nxt[col:col + 2] == "# ":
                want.append(nxt[col + 2:])
            else:
                break
        out.append((line.strip(), want))
    return out


def test_examples_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = blocks()
    assert len(found) >= 5
    ns = {}
    for code in found:
        # Run line by line groups: the whole block, capturing the output of each print.
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "docs/PYTHON.md", "exec"), ns)
        printed = buf.getvalue().splitlines()
        want = [w for _, ws in expected_outputs(code) for w in ws]
        # every expected line appears, in order, among the printed ones
        it = iter(printed)
        for w in want:
            assert any(p.strip() == w.strip() for p in it), f"expected {w!r} in the output:\n{buf.getvalue()}"
