"""Settings validation and the bounded gzip inflation (no processes)."""

from __future__ import annotations

import gzip

import pytest
from pydantic import ValidationError

from aem.serve.command import load_settings
from aem.serve.http_receiver import HttpError, inflate
from aem.serve.settings import ServeSettings


def test_non_loopback_bind_needs_explicit_permission() -> None:
    with pytest.raises(ValidationError, match="allow_non_loopback"):
        ServeSettings(host="0.0.0.0")
    assert ServeSettings(host="0.0.0.0", allow_non_loopback=True).host == "0.0.0.0"
    assert ServeSettings(host="::1").host == "::1"


def test_tls_files_go_together_and_limits_are_consistent() -> None:
    with pytest.raises(ValidationError, match="go together"):
        ServeSettings(tls_cert_file="cert.pem")
    with pytest.raises(ValidationError, match="max_decompressed_bytes"):
        ServeSettings(max_request_bytes=10_000, max_decompressed_bytes=5_000)


def test_settings_from_toml_and_overrides(tmp_path) -> None:
    path = tmp_path / "aem.toml"
    path.write_text("[serve]\ngrpc_port = 5317\nsession_idle_seconds = 3\n")
    settings = load_settings(path, ["serve.session_idle_seconds=4", "compare.x=1"])
    assert (settings.grpc_port, settings.session_idle_seconds) == (5317, 4.0)
    with pytest.raises(ValidationError):
        load_settings(path, ["serve.no_such_setting=1"])


def test_inflate_is_bounded() -> None:
    assert inflate(gzip.compress(b"abc"), 10) == b"abc"
    with pytest.raises(HttpError) as bomb:
        inflate(gzip.compress(b"\0" * 100_000), 1000)
    assert bomb.value.status == 413
    with pytest.raises(HttpError) as truncated:
        inflate(gzip.compress(b"abc" * 1000)[:20], 10_000)
    assert truncated.value.status == 400


def test_retention_is_positive_and_pruned_more_often_than_it_lasts() -> None:
    assert ServeSettings().retention_seconds == 86_400
    with pytest.raises(ValidationError, match="greater than 0"):
        ServeSettings(retention_seconds=0)
    with pytest.raises(ValidationError, match="retention_prune_interval_seconds"):
        ServeSettings(retention_seconds=30, retention_prune_interval_seconds=60)
