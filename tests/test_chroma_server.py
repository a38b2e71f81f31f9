"""The knowledge store on a real Chroma server (`chroma run`, which ships with chromadb).

    python -m pytest tests/test_chroma_server.py

The test starts `chroma run` on a free loopback port; the store is opened with --chroma-url.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import knowledge.store as store_module
from interviewer.local_model import free_port
from knowledge.bank import DATA_DIR, BankError, load_bank
from knowledge.store import Store


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    exe = Path(sys.executable).with_name("chroma")
    if not exe.exists():
        exe = shutil.which("chroma")
    assert exe, "chromadb is a dependency, so its `chroma` command must be installed"
    port = free_port()
    folder = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen([str(exe), "run", "--path", str(folder / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=(folder / "log").open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2):
                break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (folder / "log").read_text()[-2000:]
            time.sleep(0.3)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


def test_server_store_has_the_embedded_layout_and_answers_lookups(chroma_url, store, bank, tmp_path):
    remote = Store.open(tmp_path / "unused", bank, url=chroma_url)
    assert not (tmp_path / "unused").exists()  # nothing local
    assert remote.count() == store.count() and remote.fingerprint == store.fingerprint == bank.fingerprint
    assert remote.question("dapo") == store.question("dapo")
    assert set(remote.rubric_vectors("dapo").key_points) == set(store.rubric_vectors("dapo").key_points)
    assert remote.nearest_questions("为什么 PPO 要取 min", k=1)[0].qid == store.nearest_questions("为什么 PPO 要取 min", k=1)[0].qid


def test_server_store_rebuilds_only_when_the_bank_changed(chroma_url, tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    Store.open(None, load_bank(data), url=chroma_url)  # up to date with this copy (usually a no-op)
    embedded = []
    real = store_module.embed
    monkeypatch.setattr(store_module, "embed", lambda texts: embedded.append(list(texts)) or real(texts))
    Store.open(None, load_bank(data), url=chroma_url)
    assert embedded == []  # unchanged: opened as it is
    f = data / "questions" / "dapo.json"
    raw = json.loads(f.read_text(encoding="utf-8"))
    raw["zh"] = raw["zh"] + "（请具体说明）"
    f.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    changed = Store.open(None, load_bank(data), url=chroma_url)
    assert embedded == [[raw["zh"]]]  # rebuilt on the server, re-using every unchanged vector
    assert changed.question("dapo").zh.endswith("（请具体说明）")
    again = Store.open(None, load_bank(data), url=chroma_url)  # a second worker sees the rebuilt store
    assert again.question("dapo").zh.endswith("（请具体说明）")


def test_no_server_is_a_clear_error(tmp_path):
    with pytest.raises(BankError, match="Chroma server"):
        Store.open(tmp_path, url=f"http://127.0.0.1:{free_port()}")
