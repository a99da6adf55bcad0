#!/usr/bin/env python3
"""php-src's own .phpt tests as minizts's oracle (see scripts/phpt.sh).

Each selected test's FILE section is written to a file and run by minizts
and by `php -n -d display_errors=stderr -d error_reporting=-1`, from the
same path. A test passes when stdout and the exit code agree and, where
both exit 255, so does the `Fatal error:`/`Parse error:` line of stderr
(its file path aside). php is the oracle, not the test's EXPECT section:
what minizts must match is what PHP 8.2 prints.

tests/phpt/selection.toml divides the selection into parts that do not
overlap: `procedural` (the default) and `oo` (--part oo), the tests that
use classes, objects, exceptions or namespaces. Each part has its own
ratchet file and results file; the report is the same for both.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SELECTION = os.path.join(ROOT, "tests", "phpt", "selection.toml")
WORK = os.path.join(ROOT, "target", "phpt")

SECTION = re.compile(rb"^--([A-Z_]+)--\s*$")
FATAL = re.compile(r"^(PHP )?(Fatal error|Parse error): (.*?)(?: in \S+(?: on line \d+|:\d+))?$", re.M)
UNSUPPORTED = re.compile(r"minizts does not support ([^)\n]+?)(?:\)| in |$)", re.M)
UNDEFINED_FN = re.compile(r"Call to undefined function ([\w\\]+)\(\)")
UNDEFINED_CONST = re.compile(r'Undefined constant "([\w\\]+)"')


def parse_phpt(path):
    """The sections of a .phpt file: name -> bytes."""
    sections, name, lines = {}, None, []
    with open(path, "rb") as f:
        for line in f:
            m = SECTION.match(line)
            if m and m.group(1).decode() not in sections:
                if name:
                    sections[name] = b"".join(lines)
                name, lines = m.group(1).decode(), []
            else:
                lines.append(line)
    if name:
        sections[name] = b"".join(lines)
    if "FILEEOF" in sections:
        sections["FILE"] = sections.pop("FILEEOF").rstrip(b"\r\n")
    return sections


def compile_features(groups):
    """A [features] table: group name -> its compiled patterns."""
    return {name: [re.compile(p, re.M) for p in pats] for name, pats in groups.items()}


def first_match(code, features, names=None):
    """'group (pattern)' for the first pattern of features (only of the
    groups in names, if given) that the code matches, else None."""
    for name, pats in features.items():
        if names is not None and name not in names:
            continue
        for p in pats:
            if p.search(code):
                return f"{name} ({p.pattern})"
    return None


class Selection:
    """The rules of tests/phpt/selection.toml for one part of the selection."""

    def __init__(self, path, part="procedural"):
        with open(path, "rb") as f:
            rules = tomllib.load(f)
        if part not in rules["parts"]:
            raise SystemExit(f"phpt.py: no part {part!r} in {path} (parts: {', '.join(rules['parts'])})")
        spec = rules["parts"][part]
        self.part = part
        self.folders = rules["folders"]
        self.skip = set(rules["sections"]["skip"])
        self.features = compile_features(rules["features"])
        self.take_in = spec.get("take_in", [])
        self.own_features = compile_features(spec.get("features", {}))
        self.passing = os.path.join(ROOT, spec["passing"])
        self.results = os.path.join(WORK, spec["results"])
        unknown = [name for name in self.take_in if name not in self.features]
        if unknown:
            raise SystemExit(f"phpt.py: part {part!r} takes in unknown features: {', '.join(unknown)}")

    @staticmethod
    def parts(path):
        with open(path, "rb") as f:
            return list(tomllib.load(f)["parts"])

    def folder(self, rel):
        """The entry of `folders` a test lies under, or None."""
        return next((f for f in self.folders if rel.startswith(f["path"] + "/")), None)

    def tests(self, src):
        for folder in self.folders:
            base = os.path.join(src, folder["path"])
            for dirpath, _, files in os.walk(base):
                for name in sorted(files):
                    if name.endswith(".phpt"):
                        full = os.path.join(dirpath, name)
                        yield os.path.relpath(full, src), full, set(folder.get("allow", []))

    def why_out(self, sections, allow):
        """None when the test is selected, else the rule that leaves it out.

        The order: the FILE section, the skipped sections, the shared
        feature groups (less the folder's `allow` and the part's `take_in`),
        then, for a part that takes features in, that the test uses one of
        them, and last the part's own feature groups."""
        if "FILE" not in sections:
            return "no FILE section"
        for s in sections:
            if s in self.skip:
                return f"section {s}"
        code = sections["FILE"].decode("utf-8", "replace")
        shared = [name for name in self.features if name not in allow and name not in self.take_in]
        why = first_match(code, self.features, shared)
        if why:
            return why
        if self.take_in and not self.uses(code):
            return f"procedural part (uses none of: {', '.join(self.take_in)})"
        return first_match(code, self.own_features)

    def uses(self, code):
        """Which of the part's `take_in` features the code uses, as
        'group (pattern)' for the first that matches, or None."""
        return first_match(code, self.features, self.take_in)

    def why_in(self, rel, sections):
        """The rules that select a test (the caller has checked that
        why_out finds none)."""
        why = f"under {self.folder(rel)['path']}"
        if self.take_in:
            why += ", uses " + self.uses(sections["FILE"].decode("utf-8", "replace"))
        return why


def run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, b"", ""


def fatal_line(stderr):
    m = FATAL.search(stderr)
    return m.group(3).strip() if m else None


def mirror_folder(src, folder):
    """Copies a test folder's other files (what its tests include or
    read: `.inc` files and sub-folders) next to where the tests' scripts
    are written, as run-tests.php runs a test beside them."""
    here, there = os.path.join(src, folder), os.path.join(WORK, "work", folder)
    os.makedirs(there, exist_ok=True)
    for name in os.listdir(here):
        if name.endswith(".phpt"):
            continue
        a, b = os.path.join(here, name), os.path.join(there, name)
        if os.path.exists(b):
            continue
        if os.path.isdir(a):
            shutil.copytree(a, b, symlinks=True, ignore=shutil.ignore_patterns("*.phpt"))
        else:
            shutil.copy2(a, b)


# How many more times php runs a test to tell whether its output varies.
# A test with few outcomes (str_shuffle of three characters has six) can
# repeat itself by chance; each run makes that less likely.
STABILITY_RUNS = 4


def php_command(args, script):
    return [args.php, "-n", "-d", "display_errors=stderr", "-d", "error_reporting=-1", script]


def script_path(rel):
    return os.path.join(WORK, "work", rel[: -len(".phpt")] + ".php")


def php_varies(php_cmd, cwd, timeout, first):
    """Whether php's exit code or output differs from `first` in one of
    STABILITY_RUNS more runs."""
    for _ in range(STABILITY_RUNS):
        rc, out, _ = run(php_cmd, cwd, timeout)
        if (rc, out) != first:
            return True
    return False


def judge(rel, full, args):
    """Runs one test; returns a dict with its status and, if not passed, why."""
    sections = parse_phpt(full)
    script = script_path(rel)
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(script, "wb") as f:
        f.write(sections["FILE"])
    cwd = os.path.dirname(script)
    php_cmd = php_command(args, script)
    mz_cmd = [args.bin, "run", script]
    prc, pout, perr = run(php_cmd, cwd, args.timeout)
    mrc, mout, merr = run(mz_cmd, cwd, args.timeout)
    r = {"test": rel, "php_rc": prc, "rc": mrc}
    if prc is None:
        r["status"] = "unstable"
        r["why"] = "php itself timed out"
        return r
    if mrc is None:
        r["status"] = "timeout"
        return r
    if mrc < 0 or mrc not in (0, 255, prc) or "panicked" in merr or "RUST_BACKTRACE" in merr:
        r["status"] = "crash"
        r["why"] = merr.strip().splitlines()[-1][:200] if merr.strip() else f"exit {mrc}"
        return r
    pf, mf = fatal_line(perr), fatal_line(merr)
    same = pout == mout and prc == mrc and (prc != 255 or pf == mf)
    if same:
        r["status"] = "same"
        return r
    # An output that varies from run to run (random numbers, addresses,
    # timing) is no oracle.
    if php_varies(php_cmd, cwd, args.timeout, (prc, pout)):
        r["status"] = "unstable"
        r["why"] = "php's own output differs between runs"
        return r
    m = UNSUPPORTED.search(merr)
    fn = UNDEFINED_FN.search(merr)
    const = UNDEFINED_CONST.search(merr)
    if m:
        r["status"], r["feature"] = "unsupported", m.group(1).strip().strip("`")
    elif fn and not UNDEFINED_FN.search(perr):
        r["status"], r["builtin"] = "unsupported", fn.group(1)
    elif const and not UNDEFINED_CONST.search(perr):
        r["status"], r["constant"] = "unsupported", const.group(1)
    elif mrc == 255 and prc != 255 and mf and mf.startswith("syntax error"):
        r["status"], r["feature"] = "unsupported", "syntax: " + mf
    else:
        r["status"] = "different"
        if prc == 255 and mrc == 255 and pout == mout:
            r["why"] = f"php: {pf} / minizts: {mf}"
        elif prc != mrc:
            r["why"] = f"exit {prc} / {mrc}" + (f": php {pf}" if pf else "") + (f"; minizts {mf}" if mf else "")
        else:
            r["why"] = "stdout differs"
    return r


def folder_of(rel):
    """The report's row for a test: Zend/tests and tests/lang whole,
    ext/NAME/tests by its subfolders (array, strings, math, ...)."""
    parts = rel.split("/")[:-1]
    if parts[0] == "ext":
        return "/".join(parts[:4])
    return "/".join(parts[:2])


STATUSES = ["same", "different", "unsupported", "crash", "timeout", "unstable"]


def report(results, out):
    by_folder = collections.defaultdict(collections.Counter)
    for r in results:
        by_folder[folder_of(r["test"])][r["status"]] += 1
    total = collections.Counter(r["status"] for r in results)
    print("| folder | tests | " + " | ".join(STATUSES) + " | same % |", file=out)
    print("|---|---:|" + "---:|" * len(STATUSES) + "---:|", file=out)

    def row(name, c):
        n = sum(c.values())
        judged = n - c["unstable"]
        pct = 100.0 * c["same"] / judged if judged else 0.0
        cells = " | ".join(str(c[s]) for s in STATUSES)
        print(f"| {name} | {n} | {cells} | {pct:.1f} |", file=out)

    for name in sorted(by_folder):
        row(name, by_folder[name])
    row("**total**", total)

    for key, title in [("feature", "features"), ("builtin", "builtins"), ("constant", "constants")]:
        c = collections.Counter(r[key] for r in results if key in r)
        if c:
            print(f"\nMissing {title} (tests stopped by each):", file=out)
            for name, n in c.most_common(30):
                print(f"  {n:4}  {name}", file=out)
    why = collections.Counter(
        re.sub(r"\d+", "N", r.get("why", "")) for r in results if r["status"] in ("different", "crash")
    )
    if why:
        print("\nDifferent output, by kind:", file=out)
        for name, n in why.most_common(15):
            print(f"  {n:4}  {name}", file=out)


def fetch_default_src():
    src = os.environ.get("PHPT_SRC")
    if src:
        return src
    marker = os.path.join(WORK, "src-dir")
    if os.path.exists(marker):
        with open(marker) as f:
            return f.read().strip()
    sys.exit("phpt.py: no php-src tests; run scripts/phpt.sh, which fetches them")


def explain(sel, src, rel):
    """--why: whether one part selects a test, and by which rule."""
    folder = sel.folder(rel)
    if folder is None:
        return f"{sel.part}: left out: not under any of its folders"
    sections = parse_phpt(os.path.join(src, rel))
    why = sel.why_out(sections, set(folder.get("allow", [])))
    if why:
        return f"{sel.part}: left out: {why}"
    return f"{sel.part}: selected: {sel.why_in(rel, sections)}"


def read_ratchet(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("filter", nargs="*", help="only tests whose path contains one of these")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "minizts"))
    ap.add_argument("--php", default="php")
    ap.add_argument("--src", help="a php-src tree (default: what scripts/phpt.sh fetched)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument(
        "--part",
        choices=Selection.parts(SELECTION),
        help="the part of tests/phpt/selection.toml to run (default: procedural; --why: every part)",
    )
    ap.add_argument("--update", action="store_true", help="rewrite the part's ratchet (tests/phpt/passing*.txt)")
    ap.add_argument("--list", metavar="STATUS", help="print the tests with this status, and why")
    ap.add_argument("--why", metavar="PATH", help="say whether each part selects a test, and by which rule")
    args = ap.parse_args()
    src = args.src or fetch_default_src()

    if args.why:
        if not os.path.isfile(os.path.join(src, args.why)):
            sys.exit(f"phpt.py: no test {args.why} in {src}")
        for part in [args.part] if args.part else Selection.parts(SELECTION):
            print(explain(Selection(SELECTION, part), src, args.why))
        return 0

    part = args.part or "procedural"
    sel = Selection(SELECTION, part)
    # How the messages name this part's ratchet, and the command that rewrites it.
    ratchet = os.path.relpath(sel.passing, ROOT)
    command = "scripts/phpt.sh" + ("" if part == "procedural" else f" --part {part}")

    chosen, out_of_scope = [], collections.Counter()
    for rel, full, allow in sel.tests(src):
        if args.filter and not any(f in rel for f in args.filter):
            continue
        why = sel.why_out(parse_phpt(full), allow)
        if why:
            out_of_scope[why.split(" (")[0]] += 1
        else:
            chosen.append((rel, full))

    for folder in sorted({os.path.dirname(rel) for rel, _ in chosen}):
        mirror_folder(src, folder)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda t: judge(t[0], t[1], args), chosen))
    results.sort(key=lambda r: r["test"])
    with open(sel.results, "w") as f:
        json.dump(results, f, indent=1)

    php_version = subprocess.run([args.php, "-n", "-r", "echo PHP_VERSION;"], capture_output=True, text=True).stdout
    print(f"php-src tests from {src}; oracle: php {php_version} -n; minizts: {args.bin}")
    print(
        f"{len(chosen)} tests selected by tests/phpt/selection.toml"
        + ("" if part == "procedural" else f" (part {part})")
        + "; left out: "
        + ", ".join(f"{k} {v}" for k, v in out_of_scope.most_common())
        + "\n"
    )
    report(results, sys.stdout)

    if args.list:
        print(f"\nTests with status {args.list}:")
        for r in results:
            if r["status"] == args.list:
                detail = r.get("why") or r.get("feature") or r.get("builtin") or r.get("constant") or ""
                print(f"  {r['test']}  {detail}")

    passed = {r["test"] for r in results if r["status"] == "same"}
    failed = [r for r in results if r["status"] not in ("same", "unstable")]
    print(f"\n{len(passed)} passed, {len(failed)} failed")

    # The ratchet: every test on the part's list must still pass. A part
    # without a list yet has nothing to keep.
    listed = read_ratchet(sel.passing)
    ran = {r["test"] for r in results}
    if args.update:
        # A test passes by chance when its output is random and minizts's
        # happened to match php's; listing it would fail a later run. Each
        # test the list gains must show php's output the same run after run.
        def varies(rel):
            script = script_path(rel)
            cmd, cwd = php_command(args, script), os.path.dirname(script)
            return php_varies(cmd, cwd, args.timeout, run(cmd, cwd, args.timeout)[:2])

        gained = sorted(passed - listed)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            varying = [t for t, v in zip(gained, pool.map(varies, gained)) if v]
        if varying:
            print(f"not listed: {len(varying)} tests whose php output varies from run to run:")
            for t in varying:
                print(f"  {t}")
            passed -= set(varying)
        if args.filter:
            # Keep the entries this run did not look at.
            passed |= listed - ran
        with open(sel.passing, "w") as f:
            f.write(f"# php-src tests minizts passes ({command} --update rewrites this list;\n")
            f.write("# a plain run fails if one of them stops passing).\n")
            for t in sorted(passed):
                f.write(t + "\n")
        print(f"wrote {len(passed)} tests to {ratchet}")
        return 0
    unstable = {r["test"] for r in results if r["status"] == "unstable"}
    regressed = sorted((listed & ran) - passed - unstable)
    if listed & unstable:
        # No oracle either way: the list should not hold them.
        print(f"{len(listed & unstable)} listed tests have output that varies ({command} --update drops them):")
        for t in sorted(listed & unstable):
            print(f"  {t}")
    missing = sorted(listed - ran) if not args.filter else []
    new = len(passed - listed)
    if new:
        print(f"{new} tests pass that {ratchet} does not list ({command} --update adds them)")
    if regressed or missing:
        status = {r["test"]: r for r in results}
        print(f"\nratchet: {len(regressed) + len(missing)} listed tests no longer pass:")
        for t in regressed:
            r = status[t]
            print(f"  {t}: {r['status']} {r.get('why') or r.get('feature') or r.get('builtin') or ''}")
        for t in missing:
            print(f"  {t}: no longer selected or not found")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
