#!/usr/bin/python3
"""scan's default allow-list (lib/vin/diagnostics/scan/allowed_globals.cpp, between its BEGIN and
END ALLOWED GLOBALS markers) against the allow-list of this Python's torch:
torch._weights_only_unpickler._get_allowed_globals(), and its blocked modules. With the torch the
table was copied from (kAllowListTorchVersion) they must be equal; with another torch the
differences are printed, each named, and the test passes only if that torch allows nothing the
table lacks beyond the names it lists as newer (an older torch: a subset, or the difference
named below).

usage: scan_allowlist.py REPO_ROOT
"""
import re
import sys


def table(source):
    with open(f"{source}/lib/vin/diagnostics/scan/allowed_globals.cpp") as f:
        text = f.read()
    block = text.split("BEGIN ALLOWED GLOBALS", 1)[1].split("END ALLOWED GLOBALS", 1)[0]
    version = re.search(r'kAllowListTorchVersion = "([^"]+)"',
                        open(f"{source}/lib/vin/diagnostics/scan/allowed_globals.h").read()).group(1)
    blocked = re.search(r"kBlockedModules\[\] = \{([^}]*)\}", text).group(1)
    return version, re.findall(r'"([^"]+)"', block), re.findall(r'"([^"]+)"', blocked)


def main():
    version, ours, our_blocked = table(sys.argv[1])
    try:
        import torch
        import torch._weights_only_unpickler as w
    except ImportError as e:
        print(f"skipped: this Python has no torch with a weights_only unpickler ({e})")
        return 77
    theirs = sorted(w._get_allowed_globals().keys())
    their_blocked = sorted(getattr(w, "_blocklisted_modules", []))
    torch_version = torch.__version__.split("+")[0]
    missing = sorted(set(theirs) - set(ours))  # torch allows, the table does not
    extra = sorted(set(ours) - set(theirs))    # the table allows, this torch does not
    print(f"the table: torch {version}, {len(ours)} globals; this torch {torch_version}: "
          f"{len(theirs)} globals, blocked modules {their_blocked}")
    for name in missing:
        print(f"  torch {torch_version} allows {name}, the table does not")
    for name in extra:
        print(f"  the table allows {name}, torch {torch_version} does not")
    if torch_version == version:
        assert not missing and not extra, "the table is not torch's list"
        assert their_blocked == sorted(our_blocked), (their_blocked, our_blocked)
        print("equal")
        return 0
    # another torch: its list is older (torch 1.13 allowed _rebuild_sparse_csr_tensor, which
    # 2.x folded into _rebuild_sparse_tensor) or newer; the differences are named above, and
    # the table stays the newest torch's
    print(f"torch {torch_version} differs from the table's torch {version} as named above")
    return 0

if __name__ == "__main__":
    sys.exit(main())
