"""One-line error messages that say what is wrong, where (issue 30, point 7).

Each case is a mistake users make, run through the command line, with the whole
line it must print: `FILE[:LINE:COL]: error: MESSAGE`, exit code 1, nothing on
standard output. Lines and columns are worked out here from the text written (`at`,
`end`), not copied from dflow's output. The cases: a `#` comment in MLIR text (and a
Python module given as a program), a `%`, `^` or `!` with no name after it, a value
used and never defined (at its first use, not at the end of the file), a file cut
short (what it leaves open, at its end), a token where an op should be, inputs that
cannot be read (in words, no `[Errno 2]`), an ONNX model where MLIR text is expected
(with the command that imports it), and a `--plot` that cannot be written (before
any work or output).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import run_dflow
from optional import require

from dflow.driver.frontdoors.cli import main

pytestmark = pytest.mark.usefixtures("module_cache")

PROGRAM = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %z = df.neg %y : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""
"""A correct program the cases below break."""

BODY_COMMENT = PROGRAM.replace("  %y", "  # a comment\n  %y")
TOP_COMMENT = "# a program\n" + PROGRAM
TRAILING_COMMENT = PROGRAM.replace("tensor<4xf32>\n}", "tensor<4xf32>  # the result\n}")
WORD_COMMENT = PROGRAM.replace("  %y", "  #note\n  %y")
"""`#note` reads as an attribute alias: xDSL's error was `in block definition`."""
TOP_WORD_COMMENT = "#note\n" + PROGRAM
"""At the top level `#note` begins an alias definition: xDSL said `Expected '='` at
the token after it, on the next line."""

COMMENT = "unexpected character '#' (comments start with //)"


def at(text: str, needle: str) -> str:
    """`LINE:COL` (from 1) of the first `needle` in `text`."""
    index = text.index(needle)
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)  # rfind: -1 on the first line
    return f"{line}:{column}"


def end(text: str) -> str:
    """`LINE:COL` just past the last character of `text`: where a parser finds the end."""
    line = text.count("\n") + 1
    column = len(text) - text.rfind("\n")
    return f"{line}:{column}"


def fails(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    """`dflow ARGV` run in process: exit 1, nothing on standard output, one line on
    standard error, returned without its newline."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    assert (code, out) == (1, ""), err
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err[:-1]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- `#`, and prefixes with no name ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "place", "message"),
    [
        (BODY_COMMENT, at(BODY_COMMENT, "#"), COMMENT),
        (TOP_COMMENT, "1:1", COMMENT),
        (TRAILING_COMMENT, at(TRAILING_COMMENT, "#"), COMMENT),
        (WORD_COMMENT, at(WORD_COMMENT, "#"), COMMENT),
        (
            TOP_WORD_COMMENT,
            "1:1",
            "expected '=' after #note, to define an alias (comments start with //)",
        ),
    ],
    ids=["in-a-body", "top-of-file", "after-an-op", "hash-word", "hash-word-at-top"],
)
def test_a_hash_comment_is_one_line_at_the_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, place: str, message: str
) -> None:
    """xDSL said `Expected suffix identifier after {first_char}`, the placeholder
    unfilled, and at the op around it (1:1 for a comment inside @main)."""
    path = write(tmp_path, "p.mlir", text)
    assert fails(capsys, "run", path) == f"{path}:{place}: error: {message}"


NO_VALUE_NAME = PROGRAM.replace("df.neg %y", "df.neg %")
NO_BLOCK_NAME = PROGRAM.replace("  func.return %z : tensor<4xf32>\n", "  cf.br ^\n")
NO_TYPE_NAME = PROGRAM.replace("func.return %z : tensor<4xf32>", "func.return %z : !")


@pytest.mark.parametrize(
    ("text", "prefix"),
    [(NO_VALUE_NAME, "%"), (NO_BLOCK_NAME, "^"), (NO_TYPE_NAME, "!")],
    ids=["value", "block", "type"],
)
def test_a_prefix_with_no_name_is_one_line_at_the_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, prefix: str
) -> None:
    path = write(tmp_path, "p.mlir", text)
    place = at(text, f"{prefix} " if prefix == "%" else prefix)
    expected = f"{path}:{place}: error: expected a name after '{prefix}'"
    assert fails(capsys, "opt", path) == expected


def test_a_python_module_dflow_wrote_is_not_taken_for_mlir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dflow run out/cpu_0.py`: the module `dflow compile` writes starts with `#`;
    one written by hand may start with a docstring. Either is said to be Python."""
    out = tmp_path / "out"
    assert main(["compile", str(write(tmp_path, "p.mlir", PROGRAM)), "-o", str(out)]) == 0
    capsys.readouterr()
    emitted = out / "cpu_0.py"
    assert emitted.read_text().startswith("#")
    docstring = write(tmp_path, "helper.py", '"""A helper."""\n\nimport numpy\n')
    for path, command in [(emitted, "run"), (emitted, "plan"), (docstring, "opt")]:
        assert fails(capsys, command, path) == (
            f"{path}: error: not MLIR text (a Python file): "
            "dflow takes a .mlir program or an .onnx model"
        )


# --- values never defined ---------------------------------------------------------------

UNDEFINED = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %w = df.add %z, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = df.add %w, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %v : tensor<4xf32>
}
"""
"""`%q` used twice, defined nowhere: xDSL said so at the end of the file."""

OTHER_FUNCTION = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = df.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %w : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
"""`%y` used in @f, defined only in @main after it: xDSL's parser took @main's, and
its verifier then failed at @f's first line (`Operation using value defined out of
its IsolatedFromAbove parent: AddOp(...)`)."""

_SECOND = OTHER_FUNCTION.index("func.func @main")
EARLIER_FUNCTION = OTHER_FUNCTION[_SECOND:] + OTHER_FUNCTION[:_SECOND]
"""The same functions the other way round: @main defines `%y`, then @f uses it."""


@pytest.mark.parametrize(
    ("text", "name", "function"),
    [(UNDEFINED, "%q", "@main"), (OTHER_FUNCTION, "%y", "@f"), (EARLIER_FUNCTION, "%y", "@f")],
    ids=["in-its-function", "defined-in-a-later-function", "defined-in-an-earlier-function"],
)
def test_a_value_never_defined_is_one_line_at_its_first_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, name: str, function: str
) -> None:
    path = write(tmp_path, "p.mlir", text)
    start = text.index(f"func.func {function}")
    use = text[: start + text[start:].index(f", {name}") + 2]  # up to the use
    expected = f"{path}:{end(use)}: error: {name} is used but never defined in {function}"
    assert fails(capsys, "run", path) == expected


# --- a file cut short, a token where an op should be ---------------------------------------

BETWEEN_OPS = PROGRAM[: PROGRAM.index("  %z")]
INSIDE_AN_OP = PROGRAM[: PROGRAM.index("%y : (")]
NESTED = "builtin.module {\n  " + PROGRAM.replace("\n", "\n  ")[: -len("}\n  ")]
"""A module around @main, cut after its `func.return`: two bodies open."""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BETWEEN_OPS, "the file ends inside the body of @main (a '}' is missing)"),
        (INSIDE_AN_OP, f"the file ends inside df.neg (begun at {at(PROGRAM, '%z')})"),
        (NESTED, "the file ends inside the body of @main (2 '}' are missing)"),
    ],
    ids=["between-ops", "inside-an-op", "two-bodies-open"],
)
def test_a_file_cut_short_says_what_it_leaves_open_at_its_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    """xDSL said `in block definition` at 1:1, or what the next token should be."""
    path = write(tmp_path, "p.mlir", text)
    assert fails(capsys, "run", path) == f"{path}:{end(text)}: error: {message}"


def test_a_token_where_an_op_should_be_is_one_line_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stray `)` between two ops: xDSL's message was ` in block definition`, at 1:1."""
    stray = ")\n"
    text = PROGRAM.replace("  %z", "  " + stray + "  %z")
    path = write(tmp_path, "p.mlir", text)
    assert fails(capsys, "opt", path) == (
        f"{path}:{at(text, stray)}: error: expected an operation, or '}}' to end the region, here"
    )


# --- inputs, models, plots ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("missing.npz", "no such file"),
        ("missing.npy", "no such file"),
        ("no-folder/in.npz", "no such file"),
        ("folder", "it is a folder, not a file"),
        ("folder.npz", "it is a folder, not a file"),
    ],
)
def test_inputs_that_cannot_be_read_say_why_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    """It was `[Errno 2] No such file or directory: 'missing.npz'` (and `[Errno 21]`)."""
    program = write(tmp_path, "p.mlir", PROGRAM)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder.npz").mkdir()
    inputs = tmp_path / name
    expected = f"{program}: error: cannot read inputs from {inputs}: {reason}"
    assert fails(capsys, "run", program, "--inputs", inputs) == expected


def test_an_onnx_model_given_as_mlir_says_how_to_import_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dflow opt` reads MLIR text only (xDSL said `Unexpected character: \\x08`); the
    command it suggests works, and `plan` still takes the model itself."""
    onnx = require("onnx", "to write an ONNX model")
    helper = onnx.helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
    )
    model = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    imported = tmp_path / "model.mlir"
    assert fails(capsys, "opt", model) == (
        f"{model}: error: an ONNX model is not MLIR text: import it first: "
        f"dflow import {model} -o {imported}"
    )
    assert main(["import", str(model), "-o", str(imported)]) == 0
    assert main(["opt", str(imported)]) == 0
    assert "df.relu" in capsys.readouterr().out
    assert main(["plan", str(model)]) == 0
    assert capsys.readouterr().out.startswith("device ")


@pytest.mark.parametrize("where", ["memory.pgf", "no-folder/memory.png", "file/memory.png"])
def test_a_plot_that_cannot_be_written_fails_before_any_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """A folder missing (or a file) printed the plan table first, then `No such file
    or directory` (`Not a directory`); `.pgf`, which matplotlib writes only with LaTeX,
    is refused before the program is read."""
    program = write(tmp_path, "p.mlir", PROGRAM)
    write(tmp_path, "file", "not a folder\n")
    plot = tmp_path / where
    reason = {
        "memory.pgf": "--plot writes .png, .svg, .pdf, .jpg, .jpeg, .tif, .tiff, .webp, .eps, "
        ".ps files, not 'memory.pgf'",
        "no-folder/memory.png": f"cannot write {plot}: there is no folder {plot.parent}",
        "file/memory.png": f"cannot write {plot}: {plot.parent} is a file, not a folder",
    }[where]
    assert fails(capsys, "plan", program, "--plot", plot) == f"{program}: error: {reason}"


def test_a_jpeg_plot_is_written(tmp_path: Path) -> None:
    """matplotlib writes `.jpg` with Pillow, one of its own dependencies; `--plot`
    refused it. Run as the command line runs, in its own process (from `tmp_path`,
    so that `dflow` is the one installed, or the one `PYTHONPATH` names)."""
    require("matplotlib", "to draw the plan (pip install 'dflow[plot]')")
    program = write(tmp_path, "p.mlir", PROGRAM)
    plot = tmp_path / "memory.jpg"
    plain = run_dflow("plan", program, cwd=tmp_path)
    drawn = run_dflow("plan", program, "--plot", plot, cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout == plain.stdout
    picture = plot.read_bytes()
    assert picture.startswith(b"\xff\xd8\xff") and picture.endswith(b"\xff\xd9")  # JPEG


# --- a function of several blocks ----------------------------------------------------------

BLOCKS = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = df.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  cf.br ^bb1(%a : tensor<4xf32>)
^bb1(%b: tensor<4xf32>):
  func.return %b : tensor<4xf32>
}
"""


@pytest.mark.parametrize(
    "extra", [["run"], ["run", "--interpret"], ["run", "--devices", "cpu:0,cpu:1"], ["plan"]]
)
def test_a_function_of_several_blocks_is_one_line_at_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str]
) -> None:
    """Branches parse (xDSL's `cf`), but the lowering has straight-line code only: it
    crashed in df-partition (found by the command-line fuzzer)."""
    path = write(tmp_path, "blocks.mlir", BLOCKS)
    message = "@main has 2 blocks: dflow runs functions of one block of straight-line code"
    assert fails(capsys, *extra, path) == (
        f"{path}:{at(BLOCKS, 'func.func')}: error: {message} (no branches)"
    )
