#!/usr/bin/python3
"""inspect-config end to end: the renderings in configs/ against the goldens in every
format, the config.yaml an archive carries, and errors naming file, line and column.

usage: test_inspect_config.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import sys
import tempfile
import time

import cli_common
from cli_common import ARGS, assert_clean_error, assert_equal, fixture, golden, run, test


@test
def config_renderings_in_configs_match_golden():
    configs = os.path.join(ARGS.source, "configs")
    names = sorted(f[:-5] for f in os.listdir(configs) if f.endswith(".yaml"))
    assert names, "no configs/*.yaml"
    for name in names:
        p = run("inspect-config", os.path.join(configs, name + ".yaml"))
        assert p.returncode == 0, f"{name}: {p.stderr}"
        assert_equal(p.stdout, golden(f"configs/{name}.jsonl"), f"configs/{name}.yaml")
    p = run("config", os.path.join(configs, "net.yaml"), "--format", "table")
    assert_equal(p.stdout, golden("configs/net.table"))
    p = run("config", os.path.join(configs, "net.yaml"), "--format", "json")
    assert_equal(p.stdout, golden("configs/net.json"))
    doc = json.loads(p.stdout)
    assert list(doc) == ["config_type", "target_type", "fields"], list(doc)


@test
def config_from_an_archive_reads_its_config_yaml():
    p = run("inspect-config", fixture("with_config.pt"))
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert lines[0] == {"record": "ModelStructureSpec", "config_type": "fixture_models.ConvNetConfig",
                        "target_type": "fixture_models.ConvNet"}, lines[0]
    assert len(lines) == 3
    assert_clean_error(run("inspect-config", fixture("convnet.pt")), 1,
                       r"convnet\.pt: the archive carries no config\.yaml; save the rendering with "
                       r"torch\.jit\.save\(m, path, _extra_files=")
    assert_clean_error(run("inspect-config", fixture("state_dict.pt")), 1, r"a torch\.save file")
    assert_clean_error(run("inspect-config", fixture("truncated.pt")), 1, r"truncated or damaged")


@test
def config_errors_name_file_line_and_column():
    cases = [
        ("malformed.yaml", "!m.C\na: 1\nb: [1, 2\nc: 3\n", r"malformed\.yaml:4:\d+: malformed YAML: "),
        ("list_root.yaml", "- 1\n- 2\n", r"list_root\.yaml:1:1: the root of a configuration "
                                          r"rendering must be a mapping"),
        ("missing_field.yaml", "!m.C\na: 1\n__declared__:\n  m.C: {a: int, b: str}\n",
         r"missing_field\.yaml:1:1: field 'b' of m\.C is declared but has no value"),
        ("bad_declared.yaml", "!m.C\na: 1\n__declared__:\n  m.C: [a]\n",
         r"bad_declared\.yaml:4:8: __declared__ entry 'm\.C' must be a mapping of field names"),
        ("deep.yaml", "a: " + "[" * 50000 + "]" * 50000 + "\n", r"deep\.yaml:\d+:\d+: the document "
                                                                  r"nests too deeply to read"),
        ("bomb.yaml", "a: &a {x: 1, y: 2}\n" + "".join(
            f"{chr(c)}: &{chr(c)} {{p: *{chr(c - 1)}, q: *{chr(c - 1)}}}\n" for c in range(98, 123)),
         r"bomb\.yaml:\d+:\d+: more than 100000 fields: too large to walk"),
        ("binary.yaml", "\x00\xff\xfe not yaml", r"binary\.yaml:"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, pattern in cases:
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="latin-1") as f:
                f.write(text)
            start = time.monotonic()
            p = run("inspect-config", path)
            elapsed = time.monotonic() - start
            try:
                assert_clean_error(p, 1, pattern)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None
            # a few seconds; sanitizer builds (scripts/test_sanitizers.sh) run several times slower
            limit = 60 if "ASAN_OPTIONS" in os.environ else 20
            assert elapsed < limit, f"{name} took {elapsed:.1f} s"
    assert_clean_error(run("config", fixture("missing.yaml")), 1, r"missing\.yaml: no such file")


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
