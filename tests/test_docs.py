"""The README's commands are the ones that work, and CI runs exactly the README's test command.

    python -m pytest tests/test_docs.py
"""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _fenced(after: str) -> str:
    block = README.split(after, 1)[1]
    return re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command():
    command = _fenced("Run the test suite")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci


def test_the_start_command_installs_the_embedded_model_and_starts_the_terminal_mode():
    command = _fenced("Start a mock interview")
    assert '".[local]"' in command and command.endswith("python -m interviewer")


def test_knowledge_commands_shown_in_the_readme_run():
    for args in (["stats"], ["lint"]):
        res = subprocess.run([sys.executable, "-m", "knowledge", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
    assert "questions" in subprocess.run([sys.executable, "-m", "knowledge", "stats"], capture_output=True, text=True,
                                         cwd=ROOT).stdout


def test_interviewer_help_lists_the_documented_flags():
    out = subprocess.run([sys.executable, "-m", "interviewer", "--help"], capture_output=True, text=True, cwd=ROOT).stdout
    for flag in ("--resume", "--list", "--lang", "--track", "--coach", "--base-url", "--grader", "--gguf", "--home",
                 "--engine", "--vllm", "--vllm-device", "--max-model-len", "--gpu-memory-utilization",
                 "--tensor-parallel-size", "--vllm-start-timeout", "--db", "--chroma-url"):
        assert flag in out and flag in README


def test_serve_help_lists_the_vllm_flags():
    out = subprocess.run([sys.executable, "-m", "interviewer", "serve", "--help"], capture_output=True, text=True,
                         cwd=ROOT).stdout
    for flag in ("--model", "--vllm", "--max-model-len", "--gpu-memory-utilization", "--tensor-parallel-size"):
        assert flag in out


def test_a_built_wheel_carries_the_data_the_code_reads(tmp_path):
    """`pip install .` (not only -e) must work: the grader's weights, the bank, its vectors and the blind sets.
    Built from a copy of the tracked files: an egg-info left by the editable install would hide a gap."""
    src = tmp_path / "src"
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    for name in tracked:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    names = set(zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist())
    from evals.cases import BLIND_SECOND, BLIND_TEST, BLIND_TRAIN, BLIND_WRONG

    blind = [f"evals/blind/{p.name}" for p in (*BLIND_TRAIN, BLIND_WRONG, BLIND_TEST, BLIND_SECOND)]
    for needed in ("interviewer/grader_weights.json", "knowledge/data/vectors.npz", "knowledge/data/questions/ppo-clip-min.json",
                   "evals/cases/ladders_g1.jsonl", *blind):
        assert needed in names, needed


def test_the_thresholds_the_readme_names_are_the_shipped_ones():
    import json

    weights = json.loads((ROOT / "interviewer" / "grader_weights.json").read_text(encoding="utf-8"))
    for name in ("unclear_p", "cover_p"):
        said = re.search(rf"`{name}` \(([0-9.]+)\)", README)
        assert said and float(said.group(1)) == weights[name], (name, said and said.group(1), weights[name])
