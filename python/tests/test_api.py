"""The package's surface: exceptions by kind, a clean namespace, argument conversions, the
generated docs/python.md and the docstring examples."""
import datetime
import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import lwcbench

ROOT = Path(__file__).resolve().parents[2]
AEAD = "ChaCha20-Poly1305"
KEY, NONCE = bytes(range(32)), bytes(range(12))


def test_dir_is_all_plus_dunders():
    dunders = {n for n in vars(lwcbench) if n.startswith("__") and n.endswith("__")}
    assert dir(lwcbench) == sorted(set(lwcbench.__all__) | dunders)
    for internal in ("os", "re", "sys", "Any", "Union", "_native", "results"):
        assert internal not in dir(lwcbench)
    for name in lwcbench.__all__:
        assert hasattr(lwcbench, name), name


def test_exception_hierarchy_comes_from_the_native_module():
    from lwcbench import _native

    assert lwcbench.LwcbenchError is _native.LwcbenchError
    for e in (lwcbench.InputError, lwcbench.AuthenticationError, lwcbench.ServiceError):
        assert issubclass(e, lwcbench.LwcbenchError)
    assert not issubclass(lwcbench.AuthenticationError, lwcbench.InputError)
    assert not issubclass(lwcbench.InputError, lwcbench.AuthenticationError)
    assert not issubclass(lwcbench.ServiceError, ValueError)
    # what raised ValueError before still does
    assert issubclass(lwcbench.InputError, ValueError) and issubclass(lwcbench.AuthenticationError, ValueError)


def test_forged_tag_raises_authentication_error():
    sealed = lwcbench.encrypt(AEAD, KEY, NONCE, b"open the valve", ad=b"hdr")
    assert lwcbench.decrypt(AEAD, KEY, NONCE, sealed, ad=b"hdr") == b"open the valve"
    forged_tag = sealed[:-1] + bytes([sealed[-1] ^ 0x01])
    forged_ct = bytes([sealed[0] ^ 0x80]) + sealed[1:]
    for data, ad in ((forged_tag, b"hdr"), (forged_ct, b"hdr"), (sealed, b"hdR")):
        with pytest.raises(lwcbench.AuthenticationError, match="authentication failed"):
            lwcbench.decrypt(AEAD, KEY, NONCE, data, ad=ad)
    # a typo is not a forgery
    with pytest.raises(lwcbench.InputError) as e:
        lwcbench.decrypt(AEAD, KEY[:31], NONCE, sealed, ad=b"hdr")
    assert not isinstance(e.value, lwcbench.AuthenticationError)
    with pytest.raises(lwcbench.InputError, match="unknown cipher"):
        lwcbench.decrypt("NoSuchCipher", KEY, NONCE, sealed)


def test_service_error_when_the_broker_is_unreachable(tmp_path):
    # port 9 (discard) on the loopback: nothing listens there in the test environment
    with pytest.raises(lwcbench.ServiceError, match="^--broker: "):
        lwcbench.link(cipher="Ascon-AEAD128", devices=1, messages=1, broker="mqtt://127.0.0.1:9",
                      out=tmp_path / "l")
    assert not (tmp_path / "l" / "run.json").exists()
    with pytest.raises(lwcbench.InputError, match="^link: "):
        lwcbench.link(no_such_option=1)
    with pytest.raises(lwcbench.InputError, match="--devices"):
        lwcbench.link(devices=0, out=tmp_path / "d")


@pytest.mark.parametrize("value,text", [
    (datetime.timedelta(minutes=10), "600s"),
    (datetime.timedelta(milliseconds=250), "250ms"),
    (datetime.timedelta(microseconds=1500), "0.001500s"),
    (datetime.timedelta(0), "0s"),
    (0, "0s"),
    (2, "2s"),
    (0.25, "250ms"),
    ("15m", "15m"),
])
def test_durations_become_cli_strings(value, text):
    assert lwcbench._duration("interval", value) == text


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), True, [1]])
def test_bad_durations_are_input_errors(bad):
    with pytest.raises(lwcbench.InputError, match="^interval: "):
        lwcbench._duration("interval", bad)


def test_choose_takes_numbers_and_timedeltas():
    s = lwcbench.choose("rp2040", "LoRa-SF9", "10m", payload="16B", flash="32KiB", lifetime="5y")
    n = lwcbench.choose("rp2040", "LoRa-SF9", datetime.timedelta(minutes=10), payload=16, flash=32 * 1024,
                        lifetime=datetime.timedelta(days=5 * 365.25))
    assert n == s
    assert lwcbench.choose("rp2040", "LoRa-SF9", 600) == lwcbench.choose("rp2040", "LoRa-SF9", "10m")
    with pytest.raises(lwcbench.InputError, match="^payload: "):
        lwcbench.choose("rp2040", "LoRa-SF9", "10m", payload=-1)


def test_link_options_become_the_cli_arguments():
    argv = lwcbench._argv({"devices": 3, "interval": 0.01, "allow_provisional": True, "force": False,
                           "cipher": ["Ascon-AEAD128", "DRACO"], "out": Path("x"), "rate": None},
                          lwcbench._LINK_DURATIONS)
    assert argv == ["--devices", "3", "--interval", "10ms", "--allow-provisional", "--cipher", "Ascon-AEAD128,DRACO",
                    "--out", "x"]


def test_docs_python_md_is_current():
    p = subprocess.run([sys.executable, str(ROOT / "scripts/data/python-docs.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_every_public_function_has_an_example():
    for name in lwcbench.__all__:
        obj = getattr(lwcbench, name)
        if callable(obj) and not isinstance(obj, type):
            assert ">>>" in (obj.__doc__ or ""), name


def test_docstring_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    attempted = 0
    for module in (lwcbench, lwcbench.results):
        r = doctest.testmod(module, extraglobs={"lwcbench": lwcbench}, optionflags=flags)
        assert r.failed == 0, (module.__name__, r)
        attempted += r.attempted
    assert attempted > 25
